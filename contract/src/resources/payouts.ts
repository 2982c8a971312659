import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { PAYOUT_SENDING_ACCESS, restrictedRoute } from '../common/access.js';
import { errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { CurrencyCode, Livemode, Money, Timestamp, TimestampInput, Uuid } from '../common/primitives.js';
import { HeldPayout } from './tax-forms.js';

const c = initContract();

export const PayoutStatus = z
  .enum(['pending', 'processing', 'paid', 'failed', 'canceled'])
  .describe(
    "`pending`: created, money not yet sent; `processing`: sent through a payout rail (POST /api/payouts/send), the provider's outcome not yet known; `paid`: marked paid or paid by the provider, its commissions are `paid`; `failed`: the provider did not pay it (`failure_reason`), its commissions went back to `approved` for the next payout; `canceled`: canceled while pending, its commissions went back to `approved`.",
  );

export const PayoutMethod = z
  .enum(['manual', 'paypal', 'stripe', 'wise'])
  .describe(
    "How it is paid (while `pending`: the affiliate's `payout_method` when the payout was created; POST /api/payouts/send uses the affiliate's current one and records it): `manual` (the export files, then marked paid) or the rail it goes through: `paypal` (PayPal Payouts to the affiliate's payout e-mail), `stripe` (a Stripe Connect transfer to the affiliate's connected account), `wise` (a Wise transfer to the affiliate's e-mail and name).",
  );

export const Payout = z
  .object({
    id: Uuid.describe('Payout id.'),
    affiliate_id: Uuid.describe('Affiliate paid.'),
    program_id: Uuid.describe('Program whose commissions it carries.'),
    currency: z.string().describe('ISO 4217 code: a payout is in one currency, never summed across currencies.'),
    amount: Money.describe(
      'Net amount paid, exact: the sum of its commissions (clawbacks and negative adjustments included); always above 0.',
    ),
    status: PayoutStatus,
    commission_count: z.number().int().describe('How many commissions it carries.'),
    reference: z
      .string()
      .nullable()
      .describe(
        "The merchant's reference of the transfer (a PayPal batch id, a bank reference), given when marking it paid.",
      ),
    method: PayoutMethod,
    provider_reference: z
      .string()
      .nullable()
      .describe(
        "The provider's ids of the transfer: PayPal `<payout_batch_id>/<payout_item_id>`, a Stripe transfer id (`tr_…`), a Wise transfer id; null while unknown (not sent, or sent and the answer not yet read back) and for `manual` payouts.",
      ),
    failure_reason: z
      .string()
      .nullable()
      .describe(
        "Why the provider did not pay it (`failed`), in the provider's terms, e.g. `PayPal: RETURNED (RECEIVER_UNREGISTERED)`; null otherwise.",
      ),
    sent_at: Timestamp.nullable().describe('When it was sent through its rail (it became `processing`).'),
    simulated: z
      .boolean()
      .describe(
        'True for a test-mode payout "sent" through a rail: nothing reached the provider, the outcome was simulated at once.',
      ),
    created_at: Timestamp,
    paid_at: Timestamp.nullable().describe('When it was marked paid, or paid by the provider.'),
    canceled_at: Timestamp.nullable().describe('When it was canceled.'),
    livemode: Livemode,
    failed_at: Timestamp.nullable().describe("When the provider's failure was recorded."),
    retried_by_payout_id: Uuid.nullable().describe(
      'A `failed` payout retried (POST /api/payouts/{id}/retry): the new payout its commissions went into. Null otherwise: a failed payout with null here can be retried.',
    ),
  })
  .describe('Payout: approved commissions of one affiliate, program and currency, paid together.');

export const CreatePayoutsBody = z.object({
  program_id: Uuid.optional().describe('Only this program; default every program.'),
  currency: CurrencyCode.optional().describe('Only commissions in this currency; default every currency.'),
  approved_before: TimestampInput.optional().describe(
    'Only commissions approved before this time (e.g. the end of last month); default now.',
  ),
});

export const SendPayoutsBody = z
  .object({
    payout_ids: z
      .array(Uuid)
      .min(1)
      .max(1000)
      .optional()
      .describe(
        'These payouts (each must be `pending`, of an affiliate with a payout rail). Without it: every pending payout of an affiliate with a rail, filtered by `program_id` and `currency`.',
      ),
    program_id: Uuid.optional().describe('Without `payout_ids`: only this program.'),
    currency: CurrencyCode.optional().describe('Without `payout_ids`: only this currency.'),
  })
  .describe('Which payouts to send.');

export const PayoutExportFormat = z
  .enum(['csv', 'paypal', 'wise'])
  .describe(
    '`csv`: every field, with a header; `paypal`: a PayPal Payouts Web upload (no header, one currency per file); `wise`: a Wise "send by email" batch template.',
  );

const PayoutEnvelope = z.object({ success: z.literal(true), data: z.object({ payout: Payout }) });
const idParam = z.object({ id: z.string().describe('Payout id (UUID).') });

export const payoutsContract = c.router({
  create: {
    method: 'POST',
    path: '/api/payouts',
    summary: 'Create payouts',
    description:
      "Gathers every `approved` commission that no payout carries and creates one `pending` payout per (affiliate, program, currency) whose net amount is above 0 and, in the program's currency, reaches the program's `minimum_payout`; the rest waits for the next run (a negative net carries over). A commission is in at most one pending or paid payout, also when two calls run at once. An affiliate of a program with `require_tax_form` whose tax form is not `accepted` gets no payout: `held` lists them with the reason, their commissions stay `approved`. Answers the payouts created, possibly none.",
    body: CreatePayoutsBody.default({}),
    responses: {
      201: z.object({
        success: z.literal(true),
        data: z.object({
          payouts: z.array(Payout),
          held: z
            .array(HeldPayout)
            .describe('Payouts not created because the program requires an accepted tax form (empty: none).'),
        }),
      }),
      ...jsonBodyErrorResponses,
    },
  },
  send: restrictedRoute(PAYOUT_SENDING_ACCESS, {
    method: 'POST',
    path: '/api/payouts/send',
    summary: 'Send payouts through PayPal, Stripe or Wise',
    description:
      "Sends each payout by its affiliate's `payout_method`, from the merchant's own account (the `paypal_payouts`, `stripe_connect` or `wise` integration): one provider batch per rail and currency. Each send carries an idempotency key derived from the payout (PayPal `sender_batch_id`/`sender_item_id`, Stripe `Idempotency-Key`, Wise `customerTransactionId`), stored before the provider is called, so that a payout is never paid twice: an answer lost on the way back is looked up with the provider by that key. Answers 202 with the payouts, now `processing`; the outcome (`paid` or `failed`) follows from the provider's webhooks and a periodic reconciliation. Nothing is sent when any payout is refused: 409 for a payout that is not `pending`; 400 for a `manual` affiliate (pay it with the export files), an affiliate without a destination, or a rail without its integration. In test mode nothing reaches a provider: the outcome is simulated at once (`simulated: true`).",
    body: SendPayoutsBody.default({}),
    responses: {
      202: z.object({ success: z.literal(true), data: z.object({ payouts: z.array(Payout) }) }),
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
      409: errorResponses[409],
    },
  }),
  list: {
    method: 'GET',
    path: '/api/payouts',
    summary: 'List payouts',
    description: 'Lists payouts, newest first, with filters and cursor pagination.',
    query: PageQuery.extend({
      status: PayoutStatus.optional().describe('Only payouts in this status.'),
      method: PayoutMethod.optional().describe('Only payouts of this method.'),
      affiliate_id: Uuid.optional().describe('Only payouts of this affiliate.'),
      program_id: Uuid.optional().describe('Only payouts of this program.'),
    }),
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({ payouts: z.array(Payout), next_cursor: NextCursor }),
      }),
      400: errorResponses[400],
    },
  },
  export: {
    method: 'GET',
    path: '/api/payouts/export',
    summary: 'Export payouts as a batch file',
    description:
      "A CSV file of the payouts matching the filters, one row per payout, paid to the affiliate's `payout_email` (else its e-mail). PayPal takes one currency per file (filter with `currency`), at most 5,000 rows; Wise at most 1,000: past those limits the answer is 400, asking to narrow the export.",
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
    description:
      'A `pending` payout becomes `paid` and its commissions `paid`, for good. Marking a `paid` payout again changes nothing; a `canceled` one answers 409.',
    pathParams: idParam,
    body: z
      .object({ reference: z.string().min(1).max(255).optional().describe('Your reference of the transfer.') })
      .default({}),
    responses: {
      200: PayoutEnvelope,
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
      409: errorResponses[409],
    },
  },
  retry: restrictedRoute(PAYOUT_SENDING_ACCESS, {
    method: 'POST',
    path: '/api/payouts/:id/retry',
    summary: 'Retry a failed payout',
    description:
      "A `failed` payout stays as the record of what the provider did. Its commissions are `approved` again; retrying gathers them (with any other approved commission of the same affiliate, program and currency) into a new payout and sends it at once by the affiliate's current `payout_method` (fix the affiliate's payout details first). Answers 202 with the new payout, `processing`; the failed payout's `retried_by_payout_id` names it from then on. A payout that is not `failed`: 409; one retried already: 409 naming the payout that carried its commissions; nothing to pay any more (its commissions were paid or rejected meanwhile): 409.",
    pathParams: idParam,
    body: z.object({}).default({}),
    responses: {
      202: PayoutEnvelope,
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
      409: errorResponses[409],
    },
  }),
  cancel: {
    method: 'POST',
    path: '/api/payouts/:id/cancel',
    summary: 'Cancel a payout',
    description:
      'A `pending` payout becomes `canceled` and releases its commissions back to `approved`, for the next payout. Canceling a `canceled` payout changes nothing; a `paid` one answers 409.',
    pathParams: idParam,
    body: z.object({}).default({}),
    responses: {
      200: PayoutEnvelope,
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
      409: errorResponses[409],
    },
  },
});

export type Payout = z.infer<typeof Payout>;
export type PayoutStatus = z.infer<typeof PayoutStatus>;
export type PayoutMethod = z.infer<typeof PayoutMethod>;
