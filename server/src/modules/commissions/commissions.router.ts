import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { CommissionsService } from './commissions.service.js';

export const commissionsRouter = (commissions: CommissionsService) =>
  s.router(contract.commissions, {
    list: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await commissions.list(requireOrganization(req).id, query) },
    }),
    get: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { commission: await commissions.get(requireOrganization(req).id, params.id) } },
    }),
    create: async ({ req, body }) => ({
      status: 201,
      body: { success: true, data: { commission: await commissions.adjust(requireOrganization(req).id, body) } },
    }),
    approve: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { commission: await commissions.approve(requireOrganization(req).id, params.id) } },
    }),
    reject: async ({ req, params, body }) => ({
      status: 200,
      body: {
        success: true,
        data: { commission: await commissions.reject(requireOrganization(req).id, params.id, body.reason) },
      },
    }),
  });
