import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { CouponsService } from './coupons.service.js';

export const couponsRouter = (coupons: CouponsService) =>
  s.router(contract.coupons, {
    create: async ({ req, body }) => ({
      status: 201,
      body: { success: true, data: { coupon: await coupons.create(requireOrganization(req).id, body) } },
    }),
    list: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await coupons.list(requireOrganization(req).id, query) },
    }),
    delete: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { coupon: await coupons.delete(requireOrganization(req).id, params.id) } },
    }),
  });
