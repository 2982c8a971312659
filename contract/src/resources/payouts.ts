import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { CurrencyCode, Livemode, Money, Timestamp, TimestampInput, Uuid } from '../common/primitives.js';

const c = initContract();

export const PayoutStatus = z
  .enum(['pending', 'paid', 'canceled'])
  .describe('`pending`: created, money not yet sent; `paid`: marked paid, its commissions are `paid`; `canceled`: its commissions went back to `approved`.');

export const Payout = z
  .object({
    id: Uuid.describe('Payout id.'),
    affiliate_id: Uuid.describe('Affiliate paid.'),
    program_id: Uuid.describe('Program whose commissions it carries.'),
    currency: z.string().describe('ISO 4217 code: a payout is in one currency, never summed across currencies.'),
    amount: Money.describe('Net amount paid, exact: the sum of its commissions (clawbacks and negative adjustments included); always above 0.'),
    status: PayoutStatus,
    commission_count: z.number().int().describe('How many commissions it carries.'),
    reference: z.string().nullable().describe("The merchant's reference of the transfer (a PayPal batch id, a bank reference), given when marking it paid."),
    created_at: Timestamp,
    paid_at: Timestamp.nullable().describe('When it was marked paid.'),
    canceled_at: Timestamp.nullable().describe('When it was canceled.'),
    livemode: Livemode,
  })
  .describe('Payout: approved commissions of one affiliate, program and currency, paid together.');

export const CreatePayoutsBody = z.object({
  program_id: Uuid.optional().describe('Only this program; default every program.'),
  currency: CurrencyCode.optional().describe('Only commissions in this currency; default every currency.'),
  approved_before: TimestampInput.optional().describe('Only commissions approved before this time (e.g. the end of last month); default now.'),
});

export const PayoutExportFormat = z
  .enum(['csv', 'paypal', 'wise'])
  .describe('`csv`: every field, with a header; `paypal`: a PayPal Payouts Web upload (no header, one currency per file); `wise`: a Wise "send by email" batch template.');

const PayoutEnvelope = z.object({ success: z.literal(true), data: z.object({ payout: Payout }) });
const idParam = z.object({ id: z.string().describe('Payout id (UUID).') });

export const payoutsContract = c.router({
  create: {
    method: 'POST',
    path: '/api/payouts',
    summary: 'Create payouts',
    description:
      "Gathers every `approved` commission that no payout carries and creates one `pending` payout per (affiliate, program, currency) whose net amount is above 0 and, in the program's currency, reaches the program's `minimum_payout`; the rest waits for the next run (a negative net carries over). A commission is in at most one pending or paid payout, also when two calls run at once. Answers the payouts created, possibly none.",
    body: CreatePayoutsBody.default({}),
    responses: { 201: z.object({ success: z.literal(true), data: z.object({ payouts: z.array(Payout) }) }), ...jsonBodyErrorResponses },
  },
  list: {
    method: 'GET',
    path: '/api/payouts',
    summary: 'List payouts',
    description: 'Lists payouts, newest first, with filters and cursor pagination.',
    query: PageQuery.extend({
      status: PayoutStatus.optional().describe('Only payouts in this status.'),
      affiliate_id: Uuid.optional().describe('Only payouts of this affiliate.'),
      program_id: Uuid.optional().describe('Only payouts of this program.'),
    }),
    responses: { 200: z.object({ success: z.literal(true), data: z.object({ payouts: z.array(Payout), next_cursor: NextCursor }) }), 400: errorResponses[400] },
  },
  export: {
    method: 'GET',
    path: '/api/payouts/export',
    summary: 'Export payouts as a batch file',
    description: "A CSV file of the payouts matching the filters, one row per payout, paid to the affiliate's `payout_email` (else its e-mail). PayPal takes one currency per file (filter with `currency`), at most 5,000 rows; Wise at most 1,000: past those limits the answer is 400, asking to narrow the export.",
    query: z.object({
      status: PayoutStatus.optional().describe('Default `pending`: what is still to be paid.'),
      format: PayoutExportFormat.optional().describe('Default `csv`.'),
      program_id: Uuid.optional().describe('Only payouts of this program.'),
      currency: CurrencyCode.optional().describe('Only payouts in this currency.'),
    }),
    responses: { 200: c.otherResponse({ contentType: 'text/csv', body: z.string() }), 400: errorResponses[400] },
  },
  get: {
    method: 'GET',
    path: '/api/payouts/:id',
    summary: 'Get a payout',
    description: 'Returns one payout.',
    pathParams: idParam,
    responses: { 200: PayoutEnvelope, 403: errorResponses[403], 404: errorResponses[404] },
  },
  markPaid: {
    method: 'POST',
    path: '/api/payouts/:id/paid',
    summary: 'Mark a payout paid',
    description: 'A `pending` payout becomes `paid` and its commissions `paid`, for good. Marking a `paid` payout again changes nothing; a `canceled` one answers 409.',
    pathParams: idParam,
    body: z.object({ reference: z.string().min(1).max(255).optional().describe('Your reference of the transfer.') }).default({}),
    responses: { 200: PayoutEnvelope, ...jsonBodyErrorResponses, 403: errorResponses[403], 404: errorResponses[404], 409: errorResponses[409] },
  },
  cancel: {
    method: 'POST',
    path: '/api/payouts/:id/cancel',
    summary: 'Cancel a payout',
    description: 'A `pending` payout becomes `canceled` and releases its commissions back to `approved`, for the next payout. Canceling a `canceled` payout changes nothing; a `paid` one answers 409.',
    pathParams: idParam,
    body: z.object({}).default({}),
    responses: { 200: PayoutEnvelope, ...jsonBodyErrorResponses, 403: errorResponses[403], 404: errorResponses[404], 409: errorResponses[409] },
  },
});

export type Payout = z.infer<typeof Payout>;
export type PayoutStatus = z.infer<typeof PayoutStatus>;
