import type { MikroORM } from '@mikro-orm/postgresql';
import { Sql } from '../../db/sql.js';
import type { CursorPosition } from '../../http/pagination.js';
import { isUuid } from '../../http/serialize.js';

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
const INVITATION = 'id, organization_id, email, role, created_at, expires_at, accepted_at, revoked_at';

/** The people module's only way to the database: users, invitations, sessions (the rows better-auth also reads). */
export class PeopleRepository {
  constructor(private readonly orm: MikroORM) {}

  private get sql(): Sql {
    return Sql.of(this.orm);
  }

  async organizationName(organizationId: string): Promise<string | undefined> {
    if (!isUuid(organizationId)) return undefined;
    return (await this.sql.one<{ name: string }>('select name from organizations where id = ?', [organizationId]))
      ?.name;
  }

  listUsers(organizationId: string, after: CursorPosition | undefined, limit: number): Promise<UserRow[]> {
    return after
      ? this.sql.rows<UserRow>(
          `select ${USER} from users where organization_id = ? and (created_at, id) > (?, ?) order by created_at, id limit ?`,
          [organizationId, after.at, after.id, limit],
        )
      : this.sql.rows<UserRow>(`select ${USER} from users where organization_id = ? order by created_at, id limit ?`, [
          organizationId,
          limit,
        ]);
  }

  async userExists(email: string): Promise<boolean> {
    return (await this.sql.one('select 1 from users where email = ?', [email])) !== undefined;
  }

  /**
   * Sets a user's role, unless that leaves the organization without an owner: the owners are
   * locked first, so two owners demoting each other at once cannot both succeed.
   */
  changeRole(organizationId: string, userId: string, role: Role): Promise<UserRow | 'not found' | 'last owner'> {
    if (!isUuid(userId)) return Promise.resolve('not found');
    return this.sql.transaction(async (sql) => {
      const owners = await sql.rows<{ id: string }>(
        `select id from users where organization_id = ? and role = 'owner' order by id for update`,
        [organizationId],
      );
      const user = await sql.one<UserRow>(`select ${USER} from users where organization_id = ? and id = ? for update`, [
        organizationId,
        userId,
      ]);
      if (!user) return 'not found';
      if (role === 'member' && user.role === 'owner' && owners.length === 1) return 'last owner';
      return (await sql.one<UserRow>(
        `update users set role = ?, updated_at = now() where organization_id = ? and id = ? returning ${USER}`,
        [role, organizationId, userId],
      ))!;
    });
  }

  /** Deletes a user, their password and every session (cascade): signed out everywhere at once. */
  removeUser(organizationId: string, userId: string): Promise<UserRow | 'not found' | 'last owner'> {
    if (!isUuid(userId)) return Promise.resolve('not found');
    return this.sql.transaction(async (sql) => {
      const owners = await sql.rows<{ id: string }>(
        `select id from users where organization_id = ? and role = 'owner' order by id for update`,
        [organizationId],
      );
      const user = await sql.one<UserRow>(`select ${USER} from users where organization_id = ? and id = ? for update`, [
        organizationId,
        userId,
      ]);
      if (!user) return 'not found';
      if (user.role === 'owner' && owners.length === 1) return 'last owner';
      await sql.rows('delete from users where organization_id = ? and id = ?', [organizationId, userId]);
      return user;
    });
  }

  /** Runs fn in one transaction (an invitation and the e-mail queued for it: people.service.ts). */
  transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    return this.sql.transaction(fn);
  }

  async insertInvitation(
    row: Omit<InvitationRow, 'accepted_at' | 'revoked_at'> & { token_hash: string; invited_by: string | null },
    sql: Sql = this.sql,
  ): Promise<InvitationRow> {
    return (await sql.one<InvitationRow>(
      `insert into invitations (id, organization_id, email, role, token_hash, invited_by, expires_at, created_at) values (?, ?, ?, ?, ?, ?, ?, ?) returning ${INVITATION}`,
      [
        row.id,
        row.organization_id,
        row.email,
        row.role,
        row.token_hash,
        row.invited_by,
        row.expires_at,
        row.created_at,
      ],
    ))!;
  }

  listInvitations(organizationId: string, after: CursorPosition | undefined, limit: number): Promise<InvitationRow[]> {
    return after
      ? this.sql.rows<InvitationRow>(
          `select ${INVITATION} from invitations where organization_id = ? and (created_at, id) < (?, ?) order by created_at desc, id desc limit ?`,
          [organizationId, after.at, after.id, limit],
        )
      : this.sql.rows<InvitationRow>(
          `select ${INVITATION} from invitations where organization_id = ? order by created_at desc, id desc limit ?`,
          [organizationId, limit],
        );
  }

  async revokeInvitation(organizationId: string, id: string, at: Date): Promise<InvitationRow | undefined> {
    if (!isUuid(id)) return undefined;
    return this.sql.one<InvitationRow>(
      `update invitations set revoked_at = coalesce(revoked_at, ?) where organization_id = ? and id = ? returning ${INVITATION}`,
      [at, organizationId, id],
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
    return this.sql
      .transaction(async (sql) => {
        const invitation = await sql.one<InvitationRow>(
          `update invitations set accepted_at = ? where token_hash = ? and accepted_at is null and revoked_at is null and expires_at > ? returning ${INVITATION}`,
          [at, tokenHash, at],
        );
        if (!invitation) return 'not found';
        const created = await sql.one<UserRow>(
          `insert into users (id, organization_id, email, name, email_verified, role, created_at, updated_at) values (?, ?, ?, ?, true, ?, ?, ?)
         on conflict (email) do nothing returning ${USER}`,
          [user.id, invitation.organization_id, invitation.email, user.name, invitation.role, at, at],
        );
        if (!created) throw new EmailTaken();
        await sql.rows(
          `insert into accounts (id, user_id, account_id, provider_id, password, created_at, updated_at) values (gen_random_uuid(), ?, ?, 'credential', ?, ?, ?)`,
          [user.id, user.id, user.passwordHash, at, at],
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
