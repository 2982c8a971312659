import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ErrorBody } from '../common/errors.js';

const c = initContract();

export const testDataContract = c.router({
  delete: {
    method: 'DELETE',
    path: '/api/test-data',
    summary: 'Delete all test data',
    description:
      'Deletes every row of the organization\'s test data (`livemode: false`): programs, affiliates, clicks, customers, conversions, the ledger, payouts, coupons, imports, outbound events and deliveries, received provider webhooks, reports, in one transaction. Keeps the test settings, as Stripe does: test API keys, test payment-provider integrations and test webhook endpoints. Live data is never touched. Only with a test key (`svc_test_…`) or a test-mode dashboard session (`X-Mode: test`); any member may do it (it cannot reach live data). Answers how many rows of each table were deleted.',
    body: c.noBody(),
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({ deleted: z.record(z.string(), z.number().int()).describe('Test rows deleted, by table.') }),
      }),
      403: ErrorBody.describe('A live key (or a live dashboard session): test data is deleted only in test mode.'),
    },
  },
});
