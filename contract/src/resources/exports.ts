import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorResponses } from '../common/errors.js';

const c = initContract();

export const ExportKind = z
  .enum(['affiliates', 'commissions', 'conversions'])
  .describe('What the file lists: the organization’s affiliates, commission entries or conversions (sales).');

export const exportsContract = c.router({
  csv: {
    method: 'GET',
    path: '/api/exports/:kind',
    summary: 'Export affiliates, commissions or conversions as CSV',
    description:
      "A CSV file (UTF-8, header row, RFC 4180 quoting) of every row of the kind, oldest first, streamed as it is read: any size is exported without being held in memory. Dates are ISO-8601 UTC; amounts exact, in major units. Free text that a spreadsheet would read as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) is prefixed with `'`. Columns — affiliates: id, email, name, slug, status, program_id, program_name, payout_email, payout_method, created_at, terms_accepted_at; commissions: id, type, status, amount, currency, affiliate_id, affiliate_email, program_id, order_id (the conversion's external_id), customer_id, description, created_at, approves_at, approved_at (when it became approved: by the merchant, or at approves_at once passed); conversions: id, order_id (external_id), customer_id, kind, status, amount, refunded_amount, currency, commission_amount, affiliate_id, affiliate_email, program_id, occurred_at, created_at, reversed_at, commission_approved_at.",
    pathParams: z.object({ kind: ExportKind }),
    responses: { 200: c.otherResponse({ contentType: 'text/csv', body: z.string() }), 400: errorResponses[400] },
  },
});

export type ExportKind = z.infer<typeof ExportKind>;
