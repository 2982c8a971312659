import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ErrorBody, errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { Timestamp, TrimmedEmail } from '../common/primitives.js';
import { AffiliatePayoutMethod } from './affiliates.js';

/**
 * Stripe Connect onboarding (shared/spec/payout-rails.md, "Partners"): a partner paid by `stripe`
 * needs a connected account. The service creates an Express account on the merchant's platform
 * (the `stripe_connect` integration) once per partner, and answers a Stripe-hosted onboarding link,
 * from the dashboard (for an affiliate) or from the portal (for the signed-in partner). And the
 * partner's own choice of payout method in the portal.
 */
const c = initContract();

export const StripeOnboardingLink = z
  .object({
    url: z
      .string()
      .describe(
        "Stripe's hosted onboarding page for the partner's connected account: single use, short-lived (send the partner there at once; ask for a new one when it expired).",
      ),
    expires_at: Timestamp.describe('When the link stops working.'),
    stripe_account_id: z
      .string()
      .describe('The connected account (`acct_…`), created on the first call and reused by every later one.'),
  })
  .describe('A Stripe Connect onboarding link.');

const OnboardingEnvelope = z.object({ success: z.literal(true), data: StripeOnboardingLink });
const noStripe = ErrorBody.describe(
  'Stripe Connect is not set up: no `stripe_connect` integration (PUT /api/integrations/stripe_connect).',
);
const stripeFailed = ErrorBody.describe(
  'Stripe refused the request or did not answer; the message says which. Nothing is stored: retrying is safe.',
);

export const stripeOnboardingContract = c.router({
  create: {
    method: 'POST',
    path: '/api/affiliates/:id/stripe-onboarding',
    summary: 'Stripe Connect onboarding link for an affiliate',
    description:
      "Creates the partner's Stripe Express connected account on the merchant's platform (once: a later call, or a call for another program of the same partner, reuses it; `stripe_account_id` is set on every membership of the partner) and answers a Stripe-hosted onboarding link (`account_onboarding`) to send the partner to. Stripe brings them back to the affiliate's page of the dashboard. Uses the `stripe_connect` integration's secret key (409 without one) and `STRIPE_API_BASE_URL`.",
    pathParams: z.object({ id: z.string().describe('Affiliate id (UUID).') }),
    body: z.object({}).default({}),
    responses: {
      200: OnboardingEnvelope,
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
      409: noStripe,
      502: stripeFailed,
    },
  },
});

export const PartnerPayoutSettings = z
  .object({
    payout_method: AffiliatePayoutMethod,
    payout_email: z.string().describe('Where PayPal and Wise payouts go (your payout e-mail, else your e-mail).'),
    stripe_connected: z
      .boolean()
      .describe('Whether you have a Stripe connected account with this merchant (made by "Connect with Stripe").'),
    available_methods: z
      .array(AffiliatePayoutMethod)
      .describe(
        'The methods this merchant pays by: `manual` always (the merchant pays by hand to your payout e-mail), `paypal`, `wise` and `stripe` when they set them up.',
      ),
  })
  .describe('How you are paid by this merchant, for every program of yours with them.');

const SettingsEnvelope = z.object({ success: z.literal(true), data: PartnerPayoutSettings });
const crossSite = ErrorBody.describe(
  'Cross-site request refused: state-changing portal requests must come from the portal itself (`Origin`).',
);

/** The portal's payout routes (spread into the partner session's router, resources/partner.ts). */
export const partnerPayoutRoutes = {
  payoutSettings: {
    method: 'GET',
    path: '/partner/api/payout-settings',
    summary: 'How I am paid',
    description: 'Your payout method and e-mail, whether you connected Stripe, and the methods this merchant pays by.',
    responses: { 200: SettingsEnvelope },
  },
  updatePayoutSettings: {
    method: 'PUT',
    path: '/partner/api/payout-settings',
    summary: 'Choose how I am paid',
    description:
      'Sets your payout method, for every program of yours with this merchant: `paypal` and `wise` pay to `payout_email` (given here or already set; 400 naming `payout_email` otherwise); `stripe` needs your connected account first (POST /partner/api/stripe-onboarding; 409 otherwise); a method the merchant does not pay by is 409.',
    body: z.object({
      payout_method: AffiliatePayoutMethod,
      payout_email: TrimmedEmail.optional().describe(
        'Where PayPal or Wise payouts go; default the payout e-mail already set.',
      ),
    }),
    responses: {
      200: SettingsEnvelope,
      ...jsonBodyErrorResponses,
      403: crossSite,
      409: ErrorBody.describe(
        'The merchant does not pay by this method, or (for `stripe`) you have not connected Stripe yet.',
      ),
    },
  },
  stripeOnboarding: {
    method: 'POST',
    path: '/partner/api/stripe-onboarding',
    summary: 'Connect with Stripe',
    description:
      "Creates your Stripe Express account on the merchant's platform (once) and answers Stripe's onboarding link; Stripe brings you back to the portal. Then choose `stripe` as your payout method. 409 when the merchant does not pay through Stripe.",
    body: z.object({}).default({}),
    responses: {
      200: OnboardingEnvelope,
      ...jsonBodyErrorResponses,
      403: crossSite,
      409: ErrorBody.describe('This merchant does not pay through Stripe.'),
      502: stripeFailed,
    },
  },
} as const;

export type StripeOnboardingLink = z.infer<typeof StripeOnboardingLink>;
export type PartnerPayoutSettings = z.infer<typeof PartnerPayoutSettings>;
