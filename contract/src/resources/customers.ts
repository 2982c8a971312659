import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ClickAttributionFields, CouponAttributionField } from '../common/attribution.js';
import { errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { Deduped, Identifier, Livemode, Timestamp, Uuid } from '../common/primitives.js';

const c = initContract();

export const CustomerStatus = z
  .enum(['trial', 'active', 'capped', 'canceled'])
  .describe(
    '`trial` signed up, not paying; `active` paying; `capped` past the commission window, still paying; `canceled` churned.',
  );

export const Customer = z
  .object({
    id: Uuid.describe('Service-side customer id.'),
    customer_id: z.string().describe("The merchant's (payment provider's) customer id; unique per organization."),
    status: CustomerStatus,
    affiliate_id: Uuid.describe('Affiliate the customer is attributed to, for life.'),
    program_id: Uuid.describe('Program of that affiliate.'),
    click_id: Uuid.nullable().describe('Click the customer was attributed by; null when attributed by slug.'),
    email: z.string().nullable().describe('Customer e-mail, if given.'),
    name: z.string().nullable().describe('Customer name, if given.'),
    first_conversion_at: Timestamp.nullable().describe(
      "`occurred_at` of the customer's earliest conversion; the commission window counts from it.",
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
    livemode: Livemode,
  })
  .describe('Customer');

export const CreateCustomerBody = z.object({
  customer_id: Identifier.describe(
    "The merchant's payment-provider customer id. Idempotency key: a repeat returns the existing customer with `deduped: true`.",
  ),
  ...ClickAttributionFields,
  ...CouponAttributionField,
  status: CustomerStatus.optional().describe('Initial status; default `trial`.'),
  email: z
    .string()
    .max(320)
    .optional()
    .describe('Customer e-mail; the fraud rules self_referral and disposable_email read it.'),
  name: z.string().max(200).optional().describe('Customer name.'),
});

export const UpdateCustomerBody = z.object({
  status: CustomerStatus.describe(
    'New status, e.g. `canceled` when the subscription cancels or `active` when it reactivates.',
  ),
});

const CustomerIdParam = z.object({
  id: z.string().min(1).describe("The service's customer UUID or the merchant's `customer_id`."),
});

const CustomerEnvelope = z.object({ success: z.literal(true), data: z.object({ customer: Customer }) });
const CustomerWriteEnvelope = CustomerEnvelope.extend({ deduped: Deduped });

export const customersContract = c.router({
  create: {
    method: 'POST',
    path: '/api/customers',
    summary: 'Track a customer',
    description:
      'Registers a customer attributed by click (`cookie_id`, `ref` or `click_id`), tying it to that affiliate and program. Idempotent on `customer_id`: a repeat answers 200 with `deduped: true` and the existing customer. 404 "No attribution found" when the referral cannot be resolved; 410 when the click is older than the program\'s click window.',
    body: CreateCustomerBody,
    responses: {
      200: CustomerWriteEnvelope,
      201: CustomerWriteEnvelope,
      ...jsonBodyErrorResponses,
      404: errorResponses[404],
      410: errorResponses[410],
    },
  },
  get: {
    method: 'GET',
    path: '/api/customers/:id',
    summary: 'Get a customer',
    description: "Returns a customer by the service's UUID or the merchant's `customer_id`.",
    pathParams: CustomerIdParam,
    responses: { 200: CustomerEnvelope, 403: errorResponses[403], 404: errorResponses[404] },
  },
  update: {
    method: 'PATCH',
    path: '/api/customers/:id',
    summary: "Change a customer's status",
    description:
      'Sets the status, e.g. `canceled` when a subscription cancels or `active` when it reactivates. Any status may follow any other.',
    pathParams: CustomerIdParam,
    body: UpdateCustomerBody,
    responses: { 200: CustomerEnvelope, ...jsonBodyErrorResponses, 403: errorResponses[403], 404: errorResponses[404] },
  },
});

export type Customer = z.infer<typeof Customer>;
export type CustomerStatus = z.infer<typeof CustomerStatus>;
export type CreateCustomerBody = z.infer<typeof CreateCustomerBody>;
