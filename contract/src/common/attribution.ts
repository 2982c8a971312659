import { z } from 'zod';
import { Identifier } from './primitives.js';

/**
 * The click-side attribution identifiers. When several are sent the service uses the first of
 * click_id, cookie_id, ref.
 */
export const ClickAttributionFields = {
  cookie_id: Identifier.optional().describe(
    "Value of the `svc_aff` cookie set by the snippet, or the `cookie_id` returned by POST /api/clicks. A raw slug (the snippet's fallback) is accepted too.",
  ),
  ref: Identifier.optional().describe(
    'Affiliate link slug from `?ref=<slug>`; accepted anywhere cookie_id is. No click window applies to it.',
  ),
  click_id: Identifier.optional().describe('Click id (UUID) returned by POST /api/clicks.'),
};

/** The weakest attribution input: used only when no click_id, cookie_id or ref is given, or none of them resolves. */
export const CouponAttributionField = {
  coupon: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe(
      "A promotion code the customer used (POST /api/coupons): attributes to the code's affiliate when no click_id, cookie_id or ref is given, or when none of them resolves (click beats coupon). Compared case-insensitively.",
    ),
};
