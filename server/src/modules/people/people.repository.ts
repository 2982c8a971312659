import type { MikroORM } from '@mikro-orm/postgresql';
import { Db } from '../../db/sql.js';
import type { CursorPosition } from '../../http/pagination.js';
import { isUuid } from '../../http/serialize.js';
import { sql } from 'kysely';

export type Role = 'owner' | 'member';

export interface UserRow {
  id: string;
  organization_id: string;
  email: string;
  name: string;
  role: Role;
  created_at: Date;
}

export interface InvitationRow {
  id: string;
  organization_id: string;
  email: string;
  role: Role;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
}

const USER = 'id, organization_id, email, name, role, created_at';

/**
 * The organization's owners, then the user, locked in that order (FOR UPDATE): a role change and a
 * removal that could leave no owner take their turns instead of both passing the "last owner" check.
 */
async function lockOwnersAndUser(db: Db, organizationId: string, userId: string) {
  const owners = await db.rows(
    sql<{
      id: string;
    }>`select id from users where organization_id = ${organizationId} and role = 'owner' order by id for update`,
  );
  const user = await db.one(
    sql<UserRow>`select ${sql.raw(USER)} from users where organization_id = ${organizationId} and id = ${userId} for update`,
  );
  return { owners, user };
}
const INVITATION = 'id, organization_id, email, role, created_at, expires_at, accepted_at, revoked_at';

/** The people module's only way to the database: users, invitations, sessions (the rows better-auth also reads). */
export class PeopleRepository {
  constructor(private readonly orm: MikroORM) {}

  private get db(): Db {
    return Db.of(this.orm);
  }

  async organizationName(organizationId: string): Promise<string | undefined> {
    if (!isUuid(organizationId)) return undefined;
    return (await this.db.one(sql<{ name: string }>`select name from organizations where id = ${organizationId}`))
      ?.name;
  }

  listUsers(organizationId: string, after: CursorPosition | undefined, limit: number): Promise<UserRow[]> {
    return after
      ? this.db.rows(
          sql<UserRow>`select ${sql.raw(USER)} from users where organization_id = ${organizationId} and (created_at, id) > (${after.at}, ${after.id}) order by created_at, id limit ${limit}`,
        )
      : this.db.rows(
          sql<UserRow>`select ${sql.raw(USER)} from users where organization_id = ${organizationId} order by created_at, id limit ${limit}`,
        );
  }

  async userExists(email: string): Promise<boolean> {
    return (await this.db.one(sql`select 1 from users where email = ${email}`)) !== undefined;
  }

  /**
   * Sets a user's role, unless that leaves the organization without an owner: the owners are
   * locked first, so two owners demoting each other at once cannot both succeed.
   */
  changeRole(organizationId: string, userId: string, role: Role): Promise<UserRow | 'not found' | 'last owner'> {
    if (!isUuid(userId)) return Promise.resolve('not found');
    return this.db.transaction(async (db) => {
      const { owners, user } = await lockOwnersAndUser(db, organizationId, userId);
      if (!user) return 'not found';
      if (role === 'member' && user.role === 'owner' && owners.length === 1) return 'last owner';
      return (await db.one(
        sql<UserRow>`update users set role = ${role}, updated_at = now() where organization_id = ${organizationId} and id = ${userId} returning ${sql.raw(USER)}`,
      ))!;
    });
  }

  /** Deletes a user, their password and every session (cascade): signed out everywhere at once. */
  removeUser(organizationId: string, userId: string): Promise<UserRow | 'not found' | 'last owner'> {
    if (!isUuid(userId)) return Promise.resolve('not found');
    return this.db.transaction(async (db) => {
      const { owners, user } = await lockOwnersAndUser(db, organizationId, userId);
      if (!user) return 'not found';
      if (user.role === 'owner' && owners.length === 1) return 'last owner';
      await db.rows(sql`delete from users where organization_id = ${organizationId} and id = ${userId}`);
      return user;
    });
  }

  /** Runs fn in one transaction (an invitation and the e-mail queued for it: people.service.ts). */
  transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  async insertInvitation(
    row: Omit<InvitationRow, 'accepted_at' | 'revoked_at'> & { token_hash: string; invited_by: string | null },
    db: Db = this.db,
  ): Promise<InvitationRow> {
    return (await db.one(
      sql<InvitationRow>`insert into invitations (id, organization_id, email, role, token_hash, invited_by, expires_at, created_at) values (${row.id}, ${row.organization_id}, ${row.email}, ${row.role}, ${row.token_hash}, ${row.invited_by}, ${row.expires_at}, ${row.created_at}) returning ${sql.raw(INVITATION)}`,
    ))!;
  }

  listInvitations(organizationId: string, after: CursorPosition | undefined, limit: number): Promise<InvitationRow[]> {
    return after
      ? this.db.rows(
          sql<InvitationRow>`select ${sql.raw(INVITATION)} from invitations where organization_id = ${organizationId} and (created_at, id) < (${after.at}, ${after.id}) order by created_at desc, id desc limit ${limit}`,
        )
      : this.db.rows(
          sql<InvitationRow>`select ${sql.raw(INVITATION)} from invitations where organization_id = ${organizationId} order by created_at desc, id desc limit ${limit}`,
        );
  }

  async revokeInvitation(organizationId: string, id: string, at: Date): Promise<InvitationRow | undefined> {
    if (!isUuid(id)) return undefined;
    return this.db.one(
      sql<InvitationRow>`update invitations set revoked_at = coalesce(revoked_at, ${at}) where organization_id = ${organizationId} and id = ${id} returning ${sql.raw(INVITATION)}`,
    );
  }

  /**
   * Accepts a pending invitation: marks it accepted and creates its user with the password hash
   * (better-auth's `credential` account, which its e-mail sign-in reads), all or nothing.
   */
  acceptInvitation(
    tokenHash: string,
    user: { id: string; name: string; passwordHash: string },
    at: Date,
  ): Promise<UserRow | 'not found' | 'email taken'> {
    return this.db
      .transaction(async (db) => {
        const invitation = await db.one(
          sql<InvitationRow>`update invitations set accepted_at = ${at} where token_hash = ${tokenHash} and accepted_at is null and revoked_at is null and expires_at > ${at} returning ${sql.raw(INVITATION)}`,
        );
        if (!invitation) return 'not found';
        const created =
          await db.one(sql<UserRow>`insert into users (id, organization_id, email, name, email_verified, role, created_at, updated_at) values (${user.id}, ${invitation.organization_id}, ${invitation.email}, ${user.name}, true, ${invitation.role}, ${at}, ${at})
         on conflict (email) do nothing returning ${sql.raw(USER)}`);
        if (!created) throw new EmailTaken();
        await db.rows(
          sql`insert into accounts (id, user_id, account_id, provider_id, password, created_at, updated_at) values (gen_random_uuid(), ${user.id}, ${user.id}, 'credential', ${user.passwordHash}, ${at}, ${at})`,
        );
        return created;
      })
      .catch((err: unknown) => {
        if (err instanceof EmailTaken) return 'email taken' as const;
        throw err;
      });
  }
}

class EmailTaken extends Error {}
