import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { Livemode, Timestamp, Uuid } from '../common/primitives.js';

const c = initContract();

export const CouponCode = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .describe('The promotion code as customers type it (compared case-insensitively, spaces at either end ignored).');

export const Coupon = z
  .object({
    id: Uuid.describe('Coupon id.'),
    code: z.string().describe('The code, as it was created.'),
    affiliate_id: Uuid.describe('Affiliate a sale paid with this code is attributed to.'),
    program_id: Uuid.describe("That affiliate's program."),
    created_at: Timestamp,
    livemode: Livemode,
  })
  .describe(
    "Coupon: a promotion code an affiliate owns. A sale or customer reported with it (`coupon` on POST /api/customers and /api/conversions, or the discount code of a provider's payment) is attributed to its affiliate when no click, cookie or ref in the same request attributes it.",
  );

export const CreateCouponBody = z.object({
  code: CouponCode,
  affiliate_id: Uuid.describe('The affiliate owning it; must belong to the organization (else 404).'),
});

const CouponEnvelope = z.object({ success: z.literal(true), data: z.object({ coupon: Coupon }) });
const idParam = z.object({ id: z.string().describe('Coupon id (UUID).') });

export const couponsContract = c.router({
  create: {
    method: 'POST',
    path: '/api/coupons',
    summary: 'Give an affiliate a coupon code',
    description:
      "Registers a promotion code of the organization as the affiliate's. Codes are unique per organization compared case-insensitively: a code taken (in any case) answers 409.",
    body: CreateCouponBody,
    responses: { 201: CouponEnvelope, ...jsonBodyErrorResponses, 404: errorResponses[404], 409: errorResponses[409] },
  },
  list: {
    method: 'GET',
    path: '/api/coupons',
    summary: 'List coupons',
    description: "Lists the organization's coupon codes, oldest first, optionally one affiliate's.",
    query: PageQuery.extend({ affiliate_id: Uuid.optional().describe("Only this affiliate's codes.") }),
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({ coupons: z.array(Coupon), next_cursor: NextCursor }),
      }),
      400: errorResponses[400],
    },
  },
  delete: {
    method: 'DELETE',
    path: '/api/coupons/:id',
    summary: 'Delete a coupon',
    description:
      'Deletes the code: it attributes nothing from then on (sales attributed by it stay as they are), and may be given again.',
    pathParams: idParam,
    body: c.noBody(),
    responses: { 200: CouponEnvelope, 403: errorResponses[403], 404: errorResponses[404] },
  },
});

export type Coupon = z.infer<typeof Coupon>;
