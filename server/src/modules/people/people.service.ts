import { createHash, randomBytes } from 'node:crypto';
import type { Invitation, Organization, User } from '@affiliate-attribution/contract';
import { ConflictError, NotFoundError } from '../../http/errors.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { iso } from '../../http/serialize.js';
import { hashPassword } from './auth.js';
import type { Mailer } from './mailer.js';
import type { InvitationRow, PeopleRepository, Role, UserRow } from './people.repository.js';
import { newRowId } from '../../db/row-ids.js';

export const INVITATION_DAYS = 7;

const toUser = (row: UserRow): User => ({
  id: row.id,
  email: row.email,
  name: row.name,
  role: row.role,
  created_at: iso(row.created_at),
});

function toInvitation(row: InvitationRow, now = new Date()): Invitation {
  const status = row.accepted_at
    ? 'accepted'
    : row.revoked_at
      ? 'revoked'
      : row.expires_at <= now
        ? 'expired'
        : 'pending';
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    status,
    created_at: iso(row.created_at),
    expires_at: iso(row.expires_at),
  };
}

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

const noOwnerLeft = 'The organization must keep at least one owner';
const emailTaken = 'A user with this e-mail already exists';

/** Users and invitations of an organization (who signs in is better-auth's: auth.ts). */
export class PeopleService {
  constructor(
    private readonly people: PeopleRepository,
    private readonly mailer: Mailer,
  ) {}

  async listUsers(
    organizationId: string,
    query: { limit?: number; cursor?: string },
  ): Promise<{ users: User[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const rows = await this.people.listUsers(organizationId, decodeCursor(query.cursor), limit + 1);
    const page = pageOf(rows, limit, (row) => ({ at: row.created_at, id: row.id }));
    return { users: page.items.map(toUser), next_cursor: page.next_cursor };
  }

  async changeRole(organizationId: string, userId: string, role: Role): Promise<User> {
    const result = await this.people.changeRole(organizationId, userId, role);
    if (result === 'not found') throw new NotFoundError('User not found');
    if (result === 'last owner') throw new ConflictError(noOwnerLeft);
    return toUser(result);
  }

  async removeUser(organizationId: string, userId: string): Promise<User> {
    const result = await this.people.removeUser(organizationId, userId);
    if (result === 'not found') throw new NotFoundError('User not found');
    if (result === 'last owner') throw new ConflictError(noOwnerLeft);
    return toUser(result);
  }

  /**
   * An invitation and its link. The token is 256 random bits, stored as its SHA-256 only (like API
   * keys): the link is in this answer and the e-mail, nowhere else.
   */
  async invite(
    organizationId: string,
    input: { email: string; role: Role; invitedBy: string | null },
    baseUrl: string,
  ): Promise<{ invitation: Invitation; accept_url: string }> {
    const organizationName = await this.people.organizationName(organizationId);
    if (organizationName === undefined) throw new NotFoundError('Organization not found');
    if (await this.people.userExists(input.email)) throw new ConflictError(emailTaken);
    const token = randomBytes(32).toString('base64url');
    const now = new Date();
    const accept_url = `${baseUrl}/dashboard/accept-invitation?token=${token}`;
    // The invitation and its e-mail together: the e-mail is queued in the invitation's transaction
    // (mail-queue.ts), so a mail server that is down neither fails the request after the invitation
    // is saved nor loses the e-mail.
    await this.mailer.ready?.();
    const row = await this.people.transaction(async (db) => {
      const inserted = await this.people.insertInvitation(
        {
          id: newRowId(),
          organization_id: organizationId,
          email: input.email,
          role: input.role,
          token_hash: hashToken(token),
          invited_by: input.invitedBy,
          created_at: now,
          expires_at: new Date(now.getTime() + INVITATION_DAYS * 86_400_000),
        },
        db,
      );
      await this.mailer.send(
        {
          to: input.email,
          subject: `You are invited to ${organizationName}'s affiliate dashboard`,
          text: `Accept the invitation (valid ${INVITATION_DAYS} days) and choose your password: ${accept_url}`,
        },
        { transaction: db },
      );
      return inserted;
    });
    this.mailer.wake?.();
    return { invitation: toInvitation(row, now), accept_url };
  }

  async listInvitations(
    organizationId: string,
    query: { limit?: number; cursor?: string },
  ): Promise<{ invitations: Invitation[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const rows = await this.people.listInvitations(organizationId, decodeCursor(query.cursor), limit + 1);
    const page = pageOf(rows, limit, (row) => ({ at: row.created_at, id: row.id }));
    return { invitations: page.items.map((row) => toInvitation(row)), next_cursor: page.next_cursor };
  }

  async revokeInvitation(organizationId: string, id: string): Promise<Invitation> {
    const row = await this.people.revokeInvitation(organizationId, id, new Date());
    if (!row) throw new NotFoundError('Invitation not found');
    return toInvitation(row);
  }

  async accept(input: {
    token: string;
    name: string;
    password: string;
  }): Promise<{ user: User; organization: Organization }> {
    const result = await this.people.acceptInvitation(
      hashToken(input.token),
      { id: newRowId(), name: input.name, passwordHash: await hashPassword(input.password) },
      new Date(),
    );
    if (result === 'not found')
      throw new NotFoundError('This invitation is not valid: it was used, revoked or has expired');
    if (result === 'email taken') throw new ConflictError(emailTaken);
    const name = (await this.people.organizationName(result.organization_id)) ?? '';
    return { user: toUser(result), organization: { id: result.organization_id, name, livemode: true } };
  }
}
