import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { ConversionsService } from './conversions.service.js';

export const conversionsRouter = (conversions: ConversionsService) =>
  s.router(contract.conversions, {
    create: async ({ req, body }) => {
      const { conversion, deduped } = await conversions.create(requireOrganization(req).id, body);
      return { status: deduped ? 200 : 201, body: { success: true, data: { conversion }, deduped } };
    },
    list: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await conversions.list(requireOrganization(req).id, query) },
    }),
    refund: async ({ req, params, body }) => {
      const { conversion, deduped } = await conversions.refund(requireOrganization(req).id, params.id, {
        amount: body?.amount,
        refund_key: body?.refund_id === undefined ? 'api' : `api:${body.refund_id}`,
        // A refund with its own id adds to the others: one past the amount is a mistake, refused.
        // Without an id the amount is the charge's running total (contract), never past the amount.
        overRefund: body?.refund_id === undefined ? 'cap' : 'refuse',
      });
      return { status: 200, body: { success: true, data: { conversion }, deduped } };
    },
    get: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { conversion: await conversions.get(requireOrganization(req).id, params.id) } },
    }),
  });
