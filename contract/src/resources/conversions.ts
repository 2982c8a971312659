import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ClickAttributionFields, CouponAttributionField } from '../common/attribution.js';
import { ErrorBody, errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import {
  CurrencyCode,
  Deduped,
  Identifier,
  Livemode,
  Money,
  MoneyInput,
  OccurredAtInput,
  Timestamp,
  TimestampInput,
  Uuid,
} from '../common/primitives.js';

const c = initContract();

export const ConversionKind = z
  .enum(['initial', 'recurring'])
  .describe(
    "`initial`: the customer's first sale, attributed by click; `recurring`: a later charge attributed by customer.",
  );

export const ConversionStatus = z
  .enum(['approved', 'reversed'])
  .describe(
    '`approved`: the commission stands (possibly reduced by a partial refund); `reversed`: the charge was fully refunded and no commission is owed.',
  );

export const Conversion = z
  .object({
    id: Uuid.describe('Service-side conversion id.'),
    external_id: z
      .string()
      .describe("The merchant's unique id of the charge (order or invoice id); unique per organization."),
    amount: Money.describe('Charge amount in major units (49.99).'),
    currency: z.string().describe('ISO 4217 currency code of amount and commission_amount.'),
    kind: ConversionKind,
    commission_amount: Money.describe(
      'Commission owed to the affiliate, rounded half-up to 2 decimals; 0 past the commission window. A partial refund reduces it in proportion to the amount refunded; a full refund makes it 0.',
    ),
    status: ConversionStatus,
    refunded_amount: Money.describe(
      'Amount of this charge refunded so far, in major units (0 when none); at most amount.',
    ),
    reversed_at: Timestamp.nullable().describe(
      'When the charge was fully refunded and the commission reversed; null otherwise.',
    ),
    customer_id: z
      .string()
      .nullable()
      .describe("The merchant's customer id, when the conversion belongs to a customer."),
    affiliate_id: Uuid.describe('Affiliate credited.'),
    program_id: Uuid.describe('Program whose commission rule applied.'),
    click_id: Uuid.nullable().describe('Click the sale was attributed by, if any.'),
    occurred_at: Timestamp.describe('When the charge happened.'),
    created_at: Timestamp,
    livemode: Livemode,
  })
  .describe('Conversion');

export const CreateConversionBody = z.object({
  external_id: Identifier.describe(
    'Stable unique id of the charge (order or invoice id). Idempotency key: a repeat returns the existing conversion with `deduped: true`, never counted twice.',
  ),
  amount: MoneyInput.describe('Charge amount in major units (49.99); from 0 to 1000000000000.'),
  currency: CurrencyCode.optional().describe("ISO 4217 currency code; default the program's currency."),
  customer_id: Identifier.optional().describe(
    "The merchant's customer id. Alone, it attributes a recurring charge to the customer's original affiliate (the customer must have been tracked). With click attribution and an unknown customer_id, the customer is created.",
  ),
  ...ClickAttributionFields,
  ...CouponAttributionField,
  kind: ConversionKind.optional().describe(
    "`initial` is allowed only on the customer's first conversion; `recurring` only with a customer. Default: `recurring` when attributed by customer_id alone, else `initial` on the first conversion.",
  ),
  occurred_at: OccurredAtInput.optional().describe(
    'When the charge happened (default now); windows are measured at this time. From 2000-01-01T00:00:00Z to at most 5 minutes in the future.',
  ),
});

export const RefundConversionBody = z.object({
  amount: MoneyInput.optional().describe(
    "Amount refunded, in major units, at most the conversion's amount. Default: the whole amount (a full refund reverses the commission). Without `refund_id` it is the total refunded for this charge so far.",
  ),
  refund_id: Identifier.optional().describe(
    'Your id of this refund. Refunds with different ids add up; a repeat with the same id (or without any id) keeps the larger amount, so resending a refund never counts it twice.',
  ),
});

const ConversionEnvelope = z.object({ success: z.literal(true), data: z.object({ conversion: Conversion }) });
const ConversionWriteEnvelope = ConversionEnvelope.extend({ deduped: Deduped });

export const conversionsContract = c.router({
  create: {
    method: 'POST',
    path: '/api/conversions',
    summary: 'Record a conversion (sale)',
    description:
      'Records a charge and computes the commission. Attributed by click (`cookie_id`, `ref`, `click_id`) for a first sale or by `customer_id` for recurring charges. Idempotent on `external_id`.',
    body: CreateConversionBody,
    responses: {
      200: ConversionWriteEnvelope,
      201: ConversionWriteEnvelope,
      ...jsonBodyErrorResponses,
      404: errorResponses[404],
      410: errorResponses[410],
    },
  },
  list: {
    method: 'GET',
    path: '/api/conversions',
    summary: 'List conversions',
    description: 'Lists conversions, newest `occurred_at` first, with optional filters and cursor pagination.',
    query: PageQuery.extend({
      customer_id: z.string().optional().describe('Only conversions of this merchant customer id.'),
      affiliate_id: Uuid.optional().describe('Only conversions credited to this affiliate.'),
      program_id: Uuid.optional().describe('Only conversions of this program.'),
      from: TimestampInput.optional().describe('Only conversions with occurred_at at or after this time.'),
      to: TimestampInput.optional().describe('Only conversions with occurred_at before this time.'),
    }),
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({ conversions: z.array(Conversion), next_cursor: NextCursor }),
      }),
      400: errorResponses[400],
    },
  },
  refund: {
    method: 'POST',
    path: '/api/conversions/:id/refund',
    summary: 'Report a refund of a conversion',
    description:
      'For merchants who do not use provider webhooks: records that the charge was refunded, in full or in part. A full refund sets `status` to `reversed` and the commission to 0; a partial refund reduces the commission in proportion. Idempotent: a repeat answers 200 with `deduped: true` and changes nothing. The conversion is addressed by UUID or external_id.',
    pathParams: z.object({ id: z.string().min(1).describe("Conversion UUID or the merchant's external_id.") }),
    // Optional on the wire: a POST without a body (or with `{}`) refunds the whole charge.
    // `.default({})`: the handler still gets an object, clients may leave the body out, and the
    // OpenAPI document marks it not required.
    body: RefundConversionBody.default({}).describe(
      'Optional: without a body (or with `{}`) the whole charge is refunded; send `amount` for a partial refund.',
    ),
    responses: {
      200: ConversionWriteEnvelope,
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
      409: ErrorBody.describe(
        'The refunds of this conversion would total more than its amount (refunds with different `refund_id`s add up); the message says how much was already refunded.',
      ),
    },
  },
  get: {
    method: 'GET',
    path: '/api/conversions/:id',
    summary: 'Get a conversion',
    description: "Returns a conversion by the service's UUID or the merchant's `external_id`.",
    pathParams: z.object({ id: z.string().min(1).describe("Conversion UUID or the merchant's external_id.") }),
    responses: { 200: ConversionEnvelope, 403: errorResponses[403], 404: errorResponses[404] },
  },
});

export type Conversion = z.infer<typeof Conversion>;
export type ConversionKind = z.infer<typeof ConversionKind>;
export type ConversionStatus = z.infer<typeof ConversionStatus>;
export type RefundConversionBody = z.infer<typeof RefundConversionBody>;
export type CreateConversionBody = z.infer<typeof CreateConversionBody>;
