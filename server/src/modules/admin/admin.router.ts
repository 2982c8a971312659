import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import type { ApiKeyAuthenticator } from '../../http/authentication.js';
import type { CacheChange } from '../../db/change-notifications.js';
import { deletionView } from '../organizations/data-deletion.js';
import type { OrganizationsService } from '../organizations/organizations.service.js';

export const adminRouter = (
  organizations: OrganizationsService,
  authenticator: ApiKeyAuthenticator,
  forget: (change: CacheChange) => void,
) =>
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
      const { deletion, changes } = await organizations.requestDeletion(params.id);
      // Its keys, programs and affiliates leave this instance's caches now (every other one's on the notification).
      for (const change of changes) forget(change);
      return { status: 202, body: { success: true, data: { deletion: deletionView(deletion) } } };
    },
    getOrganizationDeletion: async ({ params }) => ({
      status: 200,
      body: { success: true, data: { deletion: deletionView(await organizations.deletionOf(params.id)) } },
    }),
    revokeApiKey: async ({ params }) => {
      const { key_hash, ...api_key_info } = await organizations.revokeKey(params.id, params.keyId);
      authenticator.forget(key_hash);
      return { status: 200, body: { success: true, data: { api_key_info } } };
    },
  });
