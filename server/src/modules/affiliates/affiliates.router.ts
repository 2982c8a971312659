import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { AffiliatesService } from './affiliates.service.js';

/** `publicBaseUrl`: PUBLIC_BASE_URL, where the partner's e-mail (an application decided) links to. */
export const affiliatesRouter = (affiliates: AffiliatesService, publicBaseUrl: string) =>
  s.router(contract.affiliates, {
    create: async ({ req, body }) => {
      const { affiliate, deduped } = await affiliates.create(requireOrganization(req).id, body);
      return { status: deduped ? 200 : 201, body: { success: true, data: { affiliate }, deduped } };
    },
    list: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await affiliates.list(requireOrganization(req).id, query) },
    }),
    get: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: await affiliates.detail(requireOrganization(req).id, params.id) },
    }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: {
        success: true,
        data: await affiliates.update(requireOrganization(req).id, params.id, body, { baseUrl: publicBaseUrl }),
      },
    }),
    erase: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { affiliate: await affiliates.erase(requireOrganization(req).id, params.id) } },
    }),
  });
