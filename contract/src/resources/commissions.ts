import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { CurrencyCode, Livemode, Money, Timestamp, TimestampInput, Uuid } from '../common/primitives.js';

const c = initContract();

export const CommissionEntryType = z
  .enum(['sale', 'clawback', 'adjustment'])
  .describe(
    '`sale`: earned by a conversion; `clawback`: negative, what a refund takes back from a sale whose commission was already paid; `adjustment`: a manual entry by the merchant (a bonus or a correction), positive or negative.',
  );

export const CommissionStatus = z
  .enum(['pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'])
  .describe(
    "`pending`: in the program's hold period, until `approves_at`; `approved`: owed, waiting for a payout; `paid`: carried by a payout marked paid (never changes again); `reversed`: the sale was fully refunded before payment, nothing owed; `rejected`: refused by the merchant, never paid; `on_hold`: a fraud signal fired, waiting for the merchant's approve or reject.",
  );

export const AppliedRate = z
  .object({
    type: z.enum(['percent', 'flat']).describe("The program's commission_type."),
    value: z.number().describe('Percent of the amount, or the flat amount.'),
    source: z
      .enum(['program', 'tier', 'affiliate'])
      .describe(
        "`program`: the program's commission_value; `tier`: a commission tier reached in the previous month; `affiliate`: the affiliate's own commission_value.",
      ),
  })
  .describe('Rate applied');

export const HoldReason = z
  .object({
    rule: z
      .enum(['self_referral', 'disposable_email', 'fast_conversion'])
      .describe("The fraud rule that fired (its name in the program's `fraud_rules`)."),
    detail: z.string().describe('Its evidence, in words.'),
  })
  .describe('Hold reason');

export const Commission = z
  .object({
    id: Uuid.describe('Commission (ledger entry) id.'),
    type: CommissionEntryType,
    status: CommissionStatus,
    amount: Money.describe(
      "Exact amount in major units, 2 decimals (the currency's minor unit); negative only for a `clawback` or a negative `adjustment`. A partial refund before payment reduces it in proportion; a `reversed` entry keeps its amount for the record and owes nothing.",
    ),
    currency: z.string().describe('ISO 4217 currency code.'),
    affiliate_id: Uuid.describe('Affiliate who earned it (or owes it back).'),
    program_id: Uuid.describe('Program whose rule computed it.'),
    conversion_id: Uuid.nullable().describe('The conversion of a `sale` or `clawback`; null for an `adjustment`.'),
    customer_id: z.string().nullable().describe("The merchant's customer id of that conversion, when it has one."),
    description: z.string().nullable().describe("An adjustment's description; null otherwise."),
    rejection_reason: z.string().nullable().describe('Why the merchant rejected it; null unless `rejected`.'),
    approves_at: Timestamp.nullable().describe(
      "When a `pending` entry becomes `approved` by itself: the sale's `occurred_at` plus the program's `hold_days`; null when the program does not approve by itself (`auto_approve: false`) and for entries that were never pending.",
    ),
    payout_id: Uuid.nullable().describe('The payout that carries it (pending or paid); null when in none.'),
    rate: AppliedRate.nullable().describe(
      'The rate a `sale` was computed with; null for other entries (and sales recorded before rates were kept).',
    ),
    hold_reasons: z
      .array(HoldReason)
      .describe(
        'Why the entry was put `on_hold`: every fraud rule that fired, with its evidence. Kept after a release or a rejection, for the record; empty when no rule fired.',
      ),
    created_at: Timestamp,
    updated_at: Timestamp,
    livemode: Livemode,
  })
  .describe('Commission: one entry of the ledger, what an affiliate earned or owes back.');

export const CreateAdjustmentBody = z.object({
  affiliate_id: Uuid.describe('Affiliate credited (or debited); must belong to the organization (else 404).'),
  amount: z
    .number()
    .finite()
    .min(-1_000_000_000)
    .max(1_000_000_000)
    .refine((v) => v !== 0, 'must not be 0')
    .describe(
      "In major units, at most the currency's minor unit (2 decimals for USD); negative for a correction that takes back.",
    ),
  currency: CurrencyCode.optional().describe("Default: the affiliate's program currency."),
  description: z.string().min(1).max(500).describe('What it is for; shown to the partner.'),
});

export const RejectCommissionBody = z.object({
  reason: z.string().min(1).max(500).optional().describe('Why; kept on the entry as `rejection_reason`.'),
});

const CommissionEnvelope = z.object({ success: z.literal(true), data: z.object({ commission: Commission }) });
const idParam = z.object({ id: z.string().describe('Commission id (UUID).') });

export const commissionsContract = c.router({
  list: {
    method: 'GET',
    path: '/api/commissions',
    summary: 'List commissions',
    description:
      'Lists ledger entries, newest first, with filters and cursor pagination. A `pending` entry whose `approves_at` has passed is listed (and filtered) as `approved`.',
    query: PageQuery.extend({
      status: CommissionStatus.optional().describe('Only entries in this status.'),
      type: CommissionEntryType.optional().describe('Only entries of this type.'),
      affiliate_id: Uuid.optional().describe('Only entries of this affiliate.'),
      program_id: Uuid.optional().describe('Only entries of this program.'),
      created_after: TimestampInput.optional().describe('Only entries created at or after this time.'),
      created_before: TimestampInput.optional().describe('Only entries created before this time.'),
    }),
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({ commissions: z.array(Commission), next_cursor: NextCursor }),
      }),
      400: errorResponses[400],
    },
  },
  get: {
    method: 'GET',
    path: '/api/commissions/:id',
    summary: 'Get a commission',
    description: 'Returns one ledger entry.',
    pathParams: idParam,
    responses: { 200: CommissionEnvelope, 403: errorResponses[403], 404: errorResponses[404] },
  },
  create: {
    method: 'POST',
    path: '/api/commissions',
    summary: 'Add an adjustment',
    description:
      'Adds a manual `adjustment` entry (a bonus or a correction), `approved` at once: the next payout carries it.',
    body: CreateAdjustmentBody,
    responses: { 201: CommissionEnvelope, ...jsonBodyErrorResponses, 404: errorResponses[404] },
  },
  approve: {
    method: 'POST',
    path: '/api/commissions/:id/approve',
    summary: 'Approve a commission',
    description:
      'A `pending` or `on_hold` entry becomes `approved` at once. Approving an `approved` entry changes nothing; any other status answers 409.',
    pathParams: idParam,
    body: z.object({}).default({}),
    responses: {
      200: CommissionEnvelope,
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
      409: errorResponses[409],
    },
  },
  reject: {
    method: 'POST',
    path: '/api/commissions/:id/reject',
    summary: 'Reject a commission',
    description:
      'A `pending`, `approved` or `on_hold` entry that no payout carries becomes `rejected`: it is never paid. Rejecting a `rejected` entry changes nothing; an entry in a payout, `paid` or `reversed` answers 409. Rejecting a `sale` also rejects its clawbacks (they took back part of a commission that is no longer owed); 409 when one of them is in a payout.',
    pathParams: idParam,
    body: RejectCommissionBody.default({}),
    responses: {
      200: CommissionEnvelope,
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
      409: errorResponses[409],
    },
  },
});

export type Commission = z.infer<typeof Commission>;
export type CommissionStatus = z.infer<typeof CommissionStatus>;
export type CommissionEntryType = z.infer<typeof CommissionEntryType>;
