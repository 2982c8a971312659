import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { OrganizationsService } from './organizations.service.js';

export const dataRetentionRouter = (organizations: OrganizationsService) =>
  s.router(contract.dataRetention, {
    get: async ({ req }) => ({
      status: 200,
      body: { success: true, data: { data_retention: await organizations.dataRetention(requireOrganization(req).id) } },
    }),
    update: async ({ req, body }) => ({
      status: 200,
      body: {
        success: true,
        data: { data_retention: await organizations.setDataRetention(requireOrganization(req).id, body) },
      },
    }),
  });
