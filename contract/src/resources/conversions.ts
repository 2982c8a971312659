import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ClickAttributionFields } from '../common/attribution.js';
import { errorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { CurrencyCode, Deduped, Identifier, Money, Timestamp, TimestampInput, Uuid } from '../common/primitives.js';

const c = initContract();

export const ConversionKind = z
  .enum(['initial', 'recurring'])
  .describe("`initial`: the customer's first sale, attributed by click; `recurring`: a later charge attributed by customer.");

export const Conversion = z
  .object({
    id: Uuid.describe('Service-side conversion id.'),
    external_id: z.string().describe("The merchant's unique id of the charge (order or invoice id); unique per organization."),
    amount: Money.describe('Charge amount in major units (49.99).'),
    currency: z.string().describe('ISO 4217 currency code of amount and commission_amount.'),
    kind: ConversionKind,
    commission_amount: Money.describe('Commission earned by the affiliate, rounded half-up to 2 decimals; 0 past the commission window.'),
    customer_id: z.string().nullable().describe("The merchant's customer id, when the conversion belongs to a customer."),
    affiliate_id: Uuid.describe('Affiliate credited.'),
    program_id: Uuid.describe('Program whose commission rule applied.'),
    click_id: Uuid.nullable().describe('Click the sale was attributed by, if any.'),
    occurred_at: Timestamp.describe('When the charge happened.'),
    created_at: Timestamp,
  })
  .describe('Conversion');

export const CreateConversionBody = z.object({
  external_id: Identifier.describe('Stable unique id of the charge (order or invoice id). Idempotency key: a repeat returns the existing conversion with `deduped: true`, never counted twice.'),
  amount: Money.min(0).describe('Charge amount in major units (49.99); must be >= 0.'),
  currency: CurrencyCode.optional().describe("ISO 4217 currency code; default the program's currency."),
  customer_id: Identifier.optional().describe(
    "The merchant's customer id. Alone, it attributes a recurring charge to the customer's original affiliate (the customer must have been tracked). With click attribution and an unknown customer_id, the customer is created.",
  ),
  ...ClickAttributionFields,
  kind: ConversionKind.optional().describe(
    '`initial` is allowed only on the customer\'s first conversion; `recurring` only with a customer. Default: `recurring` when attributed by customer_id alone, else `initial` on the first conversion.',
  ),
  occurred_at: TimestampInput.optional().describe('When the charge happened (default now); windows are measured at this time. At most 5 minutes in the future.'),
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
      400: errorResponses[400],
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
      customer_id: z.string().optional().describe("Only conversions of this merchant customer id."),
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
export type CreateConversionBody = z.infer<typeof CreateConversionBody>;
