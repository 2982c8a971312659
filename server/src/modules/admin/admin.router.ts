import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import type { ApiKeyAuthenticator } from '../../http/authentication.js';
import type { OrganizationsService } from '../organizations/organizations.service.js';

export const adminRouter = (organizations: OrganizationsService, authenticator: ApiKeyAuthenticator) =>
  s.router(contract.admin, {
    createOrganization: async ({ body }) => ({
      status: 201,
      body: { success: true, data: await organizations.create(body.name) },
    }),
    issueApiKey: async ({ params, body }) => ({
      status: 201,
      body: { success: true, data: await organizations.issueKey(params.id, body?.mode ?? 'live') },
    }),
    listApiKeys: async ({ params }) => ({
      status: 200,
      body: { success: true, data: { api_keys: await organizations.listKeys(params.id) } },
    }),
    deleteOrganization: async ({ params }) => {
      const { deleted, keyHashes } = await organizations.deleteWithEverything(params.id);
      for (const keyHash of keyHashes) authenticator.forget(keyHash);
      return { status: 200, body: { success: true, data: { deleted } } };
    },
    revokeApiKey: async ({ params }) => {
      const { key_hash, ...api_key_info } = await organizations.revokeKey(params.id, params.keyId);
      authenticator.forget(key_hash);
      return { status: 200, body: { success: true, data: { api_key_info } } };
    },
  });
