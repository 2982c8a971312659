import { defineEntity } from '@mikro-orm/core';

export const AffiliateEntity = defineEntity({
  name: 'Affiliate',
  tableName: 'affiliates',
  properties: (p) => ({
    id: p.uuid().primary(),
    organization_id: p.uuid(),
    program_id: p.uuid(),
    email: p.text(),
    name: p.text().nullable(),
    slug: p.text(),
    status: p.enum(['active', 'pending', 'disabled'] as const).default('active'),
    payout_email: p.text().nullable(),
    /** How payouts reach the partner (modules/payouts/rails): `manual` = the export files. */
    payout_method: p.enum(['manual', 'paypal', 'stripe', 'wise'] as const).default('manual'),
    /** The partner's Stripe connected account (`acct_…`), for `stripe` payouts. */
    stripe_account_id: p.text().nullable(),
    /** Overrides the program's commission_value and tiers for this affiliate (same commission_type). */
    commission_value: p.decimal('string').nullable(),
    /** The partner's last portal sign-in, as self_referral compares a click with it (the portal writes them). */
    portal_sign_in_ip: p.text().nullable(),
    portal_sign_in_user_agent: p.text().nullable(),
    terms_accepted_at: p.datetime().nullable(),
    /** When the partner's personal details were erased on request (affiliates.service.ts erase). */
    erased_at: p.datetime().nullable(),
    /** The partner's tax form (modules/tax-forms): null status is `missing`; the document is in tax_forms. */
    tax_form_status: p.enum(['submitted', 'accepted', 'rejected'] as const).nullable(),
    tax_form_kind: p.enum(['w9', 'w8ben', 'w8bene'] as const).nullable(),
    tax_form_submitted_at: p.datetime().nullable(),
    tax_form_decided_at: p.datetime().nullable(),
    tax_form_rejection_reason: p.text().nullable(),
    created_at: p.datetime().defaultRaw('now()'),
  }),
});
