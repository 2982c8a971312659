import { contract } from '@affiliate-attribution/contract';
import type { ApiKeyAuthenticator } from '../../http/authentication.js';
import { requireOrganization } from '../../http/request-context.js';
import { s } from '../../http/router-types.js';
import type { OrganizationsService } from '../organizations/organizations.service.js';
import type { PeopleService } from './people.service.js';

/** `publicBaseUrl`: `{base_url}` of the links handed out, PUBLIC_BASE_URL (never the request's Host). */
export const peopleRouter = (deps: {
  people: PeopleService;
  organizations: OrganizationsService;
  authenticator: ApiKeyAuthenticator;
  publicBaseUrl: string;
}) =>
  s.router(contract.people, {
    listUsers: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await deps.people.listUsers(requireOrganization(req).account_id, query) },
    }),
    updateUser: async ({ req, params, body }) => ({
      status: 200,
      body: {
        success: true,
        data: { user: await deps.people.changeRole(requireOrganization(req).account_id, params.id, body.role) },
      },
    }),
    removeUser: async ({ req, params }) => ({
      status: 200,
      body: {
        success: true,
        data: { user: await deps.people.removeUser(requireOrganization(req).account_id, params.id) },
      },
    }),
    listInvitations: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await deps.people.listInvitations(requireOrganization(req).account_id, query) },
    }),
    createInvitation: async ({ req, body }) => ({
      status: 201,
      body: {
        success: true,
        data: await deps.people.invite(
          requireOrganization(req).account_id,
          { email: body.email, role: body.role, invitedBy: req.user?.id ?? null },
          deps.publicBaseUrl,
        ),
      },
    }),
    revokeInvitation: async ({ req, params }) => ({
      status: 200,
      body: {
        success: true,
        data: { invitation: await deps.people.revokeInvitation(requireOrganization(req).account_id, params.id) },
      },
    }),
    // Keys are the account's, both modes together: listed and revoked the same in either mode; a
    // key issued in test mode (X-Mode: test) is a test key.
    listApiKeys: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await deps.organizations.pageKeys(requireOrganization(req).account_id, query) },
    }),
    createApiKey: async ({ req }) => {
      const organization = requireOrganization(req);
      return {
        status: 201,
        body: {
          success: true,
          data: await deps.organizations.issueKey(organization.account_id, organization.livemode ? 'live' : 'test'),
        },
      };
    },
    revokeApiKey: async ({ req, params }) => {
      const { key_hash, ...api_key_info } = await deps.organizations.revokeKey(
        requireOrganization(req).account_id,
        params.id,
      );
      deps.authenticator.forget(key_hash);
      return { status: 200, body: { success: true, data: { api_key_info } } };
    },
  });

export const accountRouter = (people: PeopleService) =>
  s.router(contract.account, {
    acceptInvitation: async ({ body }) => ({ status: 201, body: { success: true, data: await people.accept(body) } }),
  });

export const operatorPeopleRouter = (people: PeopleService, publicBaseUrl: string) =>
  s.router(contract.adminPeople, {
    inviteOwner: async ({ params, body }) => ({
      status: 201,
      body: {
        success: true,
        data: await people.invite(params.id, { email: body.email, role: 'owner', invitedBy: null }, publicBaseUrl),
      },
    }),
  });
