import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { PayoutSender } from './payout-sender.js';
import type { PayoutsService } from './payouts.service.js';

export const payoutsRouter = (payouts: PayoutsService, sender: PayoutSender) =>
  s.router(contract.payouts, {
    create: async ({ req, body }) => ({
      status: 201,
      body: { success: true, data: await payouts.create(requireOrganization(req).id, body) },
    }),
    list: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await payouts.list(requireOrganization(req).id, query) },
    }),
    export: async ({ req, query, res }) => {
      const file = await payouts.export(requireOrganization(req).id, query);
      res.setHeader('Content-Disposition', `attachment; filename="payouts-${query.format ?? 'csv'}.csv"`);
      return { status: 200, body: file };
    },
    get: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { payout: await payouts.get(requireOrganization(req).id, params.id) } },
    }),
    markPaid: async ({ req, params, body }) => ({
      status: 200,
      body: {
        success: true,
        data: { payout: await payouts.markPaid(requireOrganization(req).id, params.id, body.reference) },
      },
    }),
    send: async ({ req, body }) => ({
      status: 202,
      body: { success: true, data: { payouts: await sender.send(requireOrganization(req).id, body) } },
    }),
    retry: async ({ req, params }) => ({
      status: 202,
      body: { success: true, data: { payout: await payouts.retry(requireOrganization(req).id, params.id, sender) } },
    }),
    cancel: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { payout: await payouts.cancel(requireOrganization(req).id, params.id) } },
    }),
  });
