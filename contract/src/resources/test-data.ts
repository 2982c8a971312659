import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ErrorBody, errorResponses } from '../common/errors.js';
import { DataDeletion } from './admin.js';

const c = initContract();

const Deleted = z
  .record(z.string(), z.number().int())
  .describe('Test rows deleted, by table (so far, while the deletion runs).');
const LiveModeRefused = ErrorBody.describe(
  'A live key (or a live dashboard session): test data is deleted only in test mode.',
);

export const testDataContract = c.router({
  delete: {
    method: 'DELETE',
    path: '/api/test-data',
    summary: 'Delete all test data',
    description:
      "Deletes every row of the organization's test data (`livemode: false`): programs, affiliates, clicks, customers, conversions, the ledger, payouts, coupons, imports, outbound events and deliveries, received provider webhooks, reports. Keeps the test settings, as Stripe does: test API keys, test payment-provider integrations and test webhook endpoints. Live data is never touched. Only with a test key (`svc_test_…`) or a test-mode dashboard session (`X-Mode: test`); any member may do it (it cannot reach live data). The rows are deleted by a job in small batches; the request waits a few seconds for it: 200 when it has finished (`deleted`: how many rows of each table), else 202 with the rows deleted so far, and `GET /api/test-data/deletion` tells when it is done. Asked again while it runs, answers the same deletion. Rows written while it runs may or may not be deleted.",
    body: c.noBody(),
    responses: {
      200: z.object({ success: z.literal(true), data: z.object({ deleted: Deleted, deletion: DataDeletion }) }),
      202: z.object({ success: z.literal(true), data: z.object({ deleted: Deleted, deletion: DataDeletion }) }),
      403: LiveModeRefused,
    },
  },
  getDeletion: {
    method: 'GET',
    path: '/api/test-data/deletion',
    summary: 'Progress of the latest deletion of test data',
    description:
      'The latest `DELETE /api/test-data` of the organization, with the rows deleted so far by table. 404 when none was asked for.',
    responses: {
      200: z.object({ success: z.literal(true), data: z.object({ deletion: DataDeletion }) }),
      403: LiveModeRefused,
      404: errorResponses[404],
    },
  },
});
