import { contract } from '@affiliate-attribution/contract';
import { API_CHANNEL } from '../../charges/channels.js';
import type { ChargeRecorder } from './charge-recorder.js';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { ConversionsService } from './conversions.service.js';

export const conversionsRouter = (conversions: ConversionsService, charges: ChargeRecorder) =>
  s.router(contract.conversions, {
    create: async ({ req, body }) => {
      const { conversion, deduped } = await charges.recordCharge(requireOrganization(req).id, body, API_CHANNEL);
      return { status: deduped ? 200 : 201, body: { success: true, data: { conversion }, deduped } };
    },
    list: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await conversions.list(requireOrganization(req).id, query) },
    }),
    refund: async ({ req, params, body }) => {
      const { conversion, deduped } = await charges.recordRefund(
        requireOrganization(req).id,
        params.id,
        {
          measure: body?.amount === undefined ? { full: true } : { amount: String(body.amount) },
          refundId: body?.refund_id,
        },
        API_CHANNEL,
      );
      return { status: 200, body: { success: true, data: { conversion }, deduped } };
    },
    get: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { conversion: await conversions.get(requireOrganization(req).id, params.id) } },
    }),
  });
