import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { TEAM_ACCESS, restricted } from '../common/access.js';
import { ErrorBody, errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { Mode, Timestamp, Uuid } from '../common/primitives.js';
import { ApiKeyInfo } from './admin.js';
import { Organization } from './me.js';

const c = initContract();

export const UserRole = z
  .enum(['owner', 'member'])
  .describe('`owner`: everything, API keys, integrations and the team included; `member`: everything but those.');

export const User = z
  .object({
    id: Uuid.describe('User id.'),
    email: z.string().describe('The address the user signs in with.'),
    name: z.string().describe('Display name.'),
    role: UserRole,
    created_at: Timestamp,
  })
  .describe('A person who signs in to the dashboard');

export const Invitation = z
  .object({
    id: Uuid.describe('Invitation id, used to revoke it.'),
    email: z.string().describe('Whom it invites.'),
    role: UserRole,
    status: z.enum(['pending', 'accepted', 'revoked', 'expired']).describe('Whether it can still be accepted.'),
    created_at: Timestamp,
    expires_at: Timestamp.describe('After this instant it can no longer be accepted (7 days after it was made).'),
  })
  .describe("An invitation to join the organization's dashboard");

const IssuedInvitation = z.object({
  invitation: Invitation,
  accept_url: z
    .string()
    .describe(
      'The link that accepts it (`{base_url}/dashboard/accept-invitation?token=…`): shown in this response only, and e-mailed (or logged when no mail is configured).',
    ),
});

const InviteEmail = z.string().trim().toLowerCase().email().max(320).describe('E-mail address of the person invited.');

const IdParam = z.object({ id: z.string().describe('Id.') });

/** Owner-only routes, refused to a test key too (common/access.ts): the team, its invitations and the organization's API keys. */
export const peopleContract = c.router(
  restricted(TEAM_ACCESS, {
    listUsers: {
      method: 'GET',
      path: '/api/users',
      summary: 'List the dashboard users',
      description: "The people who can sign in to the organization's dashboard, oldest first.",
      query: PageQuery,
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ users: z.array(User), next_cursor: NextCursor }) }),
        400: errorResponses[400],
      },
    },
    updateUser: {
      method: 'PATCH',
      path: '/api/users/:id',
      summary: "Change a user's role",
      description: 'Makes a user an `owner` or a `member`. The organization keeps at least one owner (409).',
      pathParams: IdParam,
      body: z.object({ role: UserRole }),
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ user: User }) }),
        ...jsonBodyErrorResponses,
        404: errorResponses[404],
        409: ErrorBody.describe('The organization would have no owner left.'),
      },
    },
    removeUser: {
      method: 'DELETE',
      path: '/api/users/:id',
      summary: 'Remove a user',
      description:
        'Removes the user and ends every session of theirs at once. The organization keeps at least one owner (409).',
      pathParams: IdParam,
      body: c.noBody(),
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ user: User }) }),
        404: errorResponses[404],
        409: ErrorBody.describe('The organization would have no owner left.'),
      },
    },
    listInvitations: {
      method: 'GET',
      path: '/api/invitations',
      summary: 'List invitations',
      description: 'Invitations of the organization, newest first, whatever their status.',
      query: PageQuery,
      responses: {
        200: z.object({
          success: z.literal(true),
          data: z.object({ invitations: z.array(Invitation), next_cursor: NextCursor }),
        }),
        400: errorResponses[400],
      },
    },
    createInvitation: {
      method: 'POST',
      path: '/api/invitations',
      summary: 'Invite a teammate',
      description:
        'Invites a person by e-mail; they choose their name and password by following `accept_url`, valid 7 days.',
      body: z.object({ email: InviteEmail, role: UserRole.default('member') }),
      responses: {
        201: z.object({ success: z.literal(true), data: IssuedInvitation }),
        ...jsonBodyErrorResponses,
        409: ErrorBody.describe('A user with this e-mail already exists.'),
      },
    },
    revokeInvitation: {
      method: 'DELETE',
      path: '/api/invitations/:id',
      summary: 'Revoke an invitation',
      description: 'The invitation can no longer be accepted.',
      pathParams: IdParam,
      body: c.noBody(),
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ invitation: Invitation }) }),
        404: errorResponses[404],
      },
    },
    listApiKeys: {
      method: 'GET',
      path: '/api/api-keys',
      summary: 'List API keys',
      description:
        "The organization's keys in redacted form, revoked ones included, oldest first, with cursor pagination: both modes, or those of `mode`.",
      query: PageQuery.extend({
        mode: Mode.optional().describe(
          'Only the keys of this mode (`live`: `svc_live_…`, `test`: `svc_test_…`), filtered before paging; both modes when left out.',
        ),
      }),
      responses: {
        200: z.object({
          success: z.literal(true),
          data: z.object({ api_keys: z.array(ApiKeyInfo), next_cursor: NextCursor }),
        }),
        400: errorResponses[400],
      },
    },
    createApiKey: {
      method: 'POST',
      path: '/api/api-keys',
      summary: 'Issue an API key',
      description:
        'Issues a new key (rotation: deploy it, then revoke the old one). The plain key is in this response only.',
      body: c.noBody(),
      responses: {
        201: z.object({
          success: z.literal(true),
          data: z.object({
            api_key: z.string().describe('The plain API key (`svc-…`). Shown in this response only; store it now.'),
            api_key_info: ApiKeyInfo,
          }),
        }),
        ...jsonBodyErrorResponses,
      },
    },
    revokeApiKey: {
      method: 'DELETE',
      path: '/api/api-keys/:id',
      summary: 'Revoke an API key',
      description:
        'Revokes a key of the organization; every instance refuses it within a few seconds (typically at once).',
      pathParams: IdParam,
      body: c.noBody(),
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ api_key_info: ApiKeyInfo }) }),
        404: errorResponses[404],
      },
    },
  }),
);

/** Accepting an invitation: no credential yet, the invitation's token is one. */
export const accountContract = c.router({
  acceptInvitation: {
    method: 'POST',
    path: '/auth/invitations/accept',
    summary: 'Accept an invitation',
    description:
      'Creates the invited user with the name and password given (argon2id-hashed). Then sign in with `POST /auth/sign-in/email` `{ email, password }`, which sets the session cookie.',
    body: z.object({
      token: z.string().min(1).max(200).describe("The `token` of the invitation's link."),
      name: z.string().trim().min(1).max(200).describe('Display name.'),
      password: z.string().min(10).max(128).describe('At least 10 characters.'),
    }),
    responses: {
      201: z.object({ success: z.literal(true), data: z.object({ user: User, organization: Organization }) }),
      ...jsonBodyErrorResponses,
      404: ErrorBody.describe('No such invitation, or it was accepted, revoked or has expired.'),
      409: ErrorBody.describe('A user with this e-mail already exists.'),
      429: ErrorBody.describe('Too many attempts from this address; retry after `Retry-After` seconds.'),
    },
  },
});

export const OwnerInvitationBody = z.object({ email: InviteEmail });
export { IssuedInvitation };

export type User = z.infer<typeof User>;
export type UserRole = z.infer<typeof UserRole>;
export type Invitation = z.infer<typeof Invitation>;

/** The operator invites an organization's first owner (joined to the admin routes in contract.ts). */
export const operatorPeopleContract = c.router(
  {
    inviteOwner: {
      method: 'POST',
      path: '/admin/organizations/:id/invitations',
      summary: 'Invite an owner (operator)',
      description:
        "Invites a person as an `owner` of the organization's dashboard: how its first user arrives. Answers the link to accept (also e-mailed, or logged when no mail is configured).",
      pathParams: z.object({ id: z.string().describe('Organization id.') }),
      body: OwnerInvitationBody,
      responses: {
        201: z.object({ success: z.literal(true), data: IssuedInvitation }),
        ...jsonBodyErrorResponses,
        404: errorResponses[404],
        409: ErrorBody.describe('A user with this e-mail already exists.'),
      },
    },
  },
  {
    commonResponses: {
      401: errorResponses[401].describe('Missing or invalid operator token.'),
      413: errorResponses[413],
    },
  },
);
