import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { Deduped, Livemode, Timestamp, Uuid } from '../common/primitives.js';
import { TaxForm } from './tax-forms.js';

const c = initContract();

export const SLUG_PATTERN = /^[a-z0-9-]{2,64}$/;

export const Slug = z
  .string()
  .regex(SLUG_PATTERN, 'Expected 2 to 64 lowercase letters, digits or "-"')
  .describe(
    'Referral link slug (`?ref=<slug>`): 2 to 64 lowercase letters, digits or "-", unique within the organization.',
  );

export const AffiliateStatus = z
  .enum(['active', 'pending', 'disabled'])
  .describe(
    "`active`: the partner's links attribute; `pending`: an application awaiting the merchant's approval; `disabled`: the links record no new click and attribute no new customer (404 `No attribution found`), while the customers already referred keep earning on their renewals.",
  );

const AffiliateCommissionValue = z
  .number()
  .finite()
  .min(0)
  .max(1_000_000)
  .describe("In the program's commission_type: a percent (at most 100) or a flat amount per paid conversion.");

export const AffiliatePayoutMethod = z
  .enum(['manual', 'paypal', 'stripe', 'wise'])
  .describe(
    "How this partner's payouts are sent (POST /api/payouts/send): `paypal` (PayPal Payouts to `payout_email`, else the e-mail), `stripe` (a Stripe Connect transfer to `stripe_account_id`), `wise` (a Wise transfer to `payout_email` with `name`), `manual` (the export files, then marked paid; the default).",
  );

export const Affiliate = z
  .object({
    id: Uuid.describe('Affiliate (membership) id.'),
    email: z.string().describe('E-mail of the partner.'),
    name: z.string().nullable().describe('Display name of the partner.'),
    program_id: Uuid.describe('Program of this membership.'),
    slug: Slug,
    status: AffiliateStatus,
    payout_email: z
      .string()
      .nullable()
      .describe("Where payouts are sent (PayPal or Wise e-mail); null: the partner's e-mail."),
    payout_method: AffiliatePayoutMethod,
    stripe_account_id: z
      .string()
      .nullable()
      .describe("The partner's Stripe connected account (`acct_…`), where `stripe` payouts go; null: none yet."),
    commission_value: z
      .number()
      .nullable()
      .describe(
        "This affiliate's own rate, overriding the program's `commission_value` and tiers (in the program's `commission_type`); null: the program's.",
      ),
    tax_form: TaxForm,
    created_at: Timestamp,
    livemode: Livemode,
  })
  .describe('Affiliate: a partner in one program, identified by (email, program).');

const StripeAccountId = z.string().regex(/^acct_[A-Za-z0-9]{1,64}$/, 'Expected a Stripe account id (acct_…)');

export const CreateAffiliateBody = z.object({
  email: z.string().email().max(320).describe('E-mail of the partner. With program_id it identifies the membership.'),
  program_id: Uuid.describe('Program to join; must belong to the organization (else 404).'),
  slug: Slug.optional().describe(
    'Referral slug; generated when omitted. A slug used by another membership of the organization answers 409.',
  ),
  name: z.string().min(1).max(200).optional().describe('Display name of the partner.'),
  payout_email: z
    .string()
    .email()
    .max(320)
    .optional()
    .describe("Where payouts are sent; default the partner's e-mail."),
  payout_method: AffiliatePayoutMethod.optional().describe(
    "How this partner's payouts are sent (POST /api/payouts/send): `paypal`, `stripe`, `wise` or `manual` (the default). A repeated create of the same membership changes nothing: set it later with PATCH.",
  ),
  stripe_account_id: StripeAccountId.optional().describe(
    "The partner's Stripe connected account (`acct_…`), where `stripe` payouts go; default none.",
  ),
  commission_value: AffiliateCommissionValue.optional().describe(
    "This affiliate's own rate, overriding the program's and its tiers; default none.",
  ),
});

export const UpdateAffiliateBody = z.object({
  name: z.string().min(1).max(200).nullable().optional().describe('Display name; null clears it.'),
  payout_email: z
    .string()
    .email()
    .max(320)
    .nullable()
    .optional()
    .describe("Where payouts are sent; null: the partner's e-mail."),
  payout_method: AffiliatePayoutMethod.optional(),
  stripe_account_id: StripeAccountId.nullable()
    .optional()
    .describe("The partner's Stripe connected account (`acct_…`); null clears it."),
  commission_value: AffiliateCommissionValue.nullable()
    .optional()
    .describe(
      "This affiliate's own rate, overriding the program's and its tiers; null: the program's again. Applies to sales recorded from then on.",
    ),
  slug: Slug.optional().describe(
    "A new referral slug. The current one becomes an alias, so links already published keep attributing to this affiliate; one of the affiliate's own aliases swaps with the current slug. A slug or alias another affiliate of the organization holds answers 409.",
  ),
  status: AffiliateStatus.optional().describe(
    '`active` approves an application or re-enables a partner; `disabled` stops their links attributing new visitors (their referred customers keep earning on renewals). Takes effect on every instance within the program-rule cache bound (typically milliseconds).',
  ),
});

const AffiliateEnvelope = z.object({ success: z.literal(true), data: z.object({ affiliate: Affiliate }) });
const AffiliateWriteEnvelope = AffiliateEnvelope.extend({ deduped: Deduped });

export const AffiliateAliases = z
  .array(Slug)
  .describe(
    "The affiliate's other link tokens, alphabetically: they attribute to it as its slug does (`?ref=<alias>`). A slug changed since, or a link an import brought.",
  );

/** One affiliate with its aliases (GET and PATCH of one affiliate). */
const AffiliateDetailEnvelope = z.object({
  success: z.literal(true),
  data: z.object({ affiliate: Affiliate, aliases: AffiliateAliases }),
});

export const affiliatesContract = c.router({
  create: {
    method: 'POST',
    path: '/api/affiliates',
    summary: 'Add an affiliate to a program',
    description:
      'Creates the membership of a partner (email) in a program. Idempotent per (email, program): a repeat answers 200 with `deduped: true` and the existing membership unchanged (a different slug in the repeat is ignored).',
    body: CreateAffiliateBody,
    responses: {
      200: AffiliateWriteEnvelope,
      201: AffiliateWriteEnvelope,
      ...jsonBodyErrorResponses,
      404: errorResponses[404],
      409: errorResponses[409],
    },
  },
  list: {
    method: 'GET',
    path: '/api/affiliates',
    summary: 'List affiliates',
    description: 'Lists the affiliates of the organization, oldest first, optionally filtered by program or e-mail.',
    query: PageQuery.extend({
      program_id: Uuid.optional().describe('Only memberships of this program.'),
      email: z.string().optional().describe('Only memberships of this e-mail.'),
    }),
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({ affiliates: z.array(Affiliate), next_cursor: NextCursor }),
      }),
      400: errorResponses[400],
    },
  },
  get: {
    method: 'GET',
    path: '/api/affiliates/:id',
    summary: 'Get an affiliate',
    description: 'Returns one affiliate membership by id, with its aliases (its other link tokens).',
    pathParams: z.object({ id: z.string().describe('Affiliate id (UUID).') }),
    responses: { 200: AffiliateDetailEnvelope, 403: errorResponses[403], 404: errorResponses[404] },
  },
  update: {
    method: 'PATCH',
    path: '/api/affiliates/:id',
    summary: 'Update an affiliate',
    description:
      "Changes the partner's name, payout e-mail, slug or status (approve an application, disable or re-enable a partner). Fields left out are unchanged. A new slug keeps the old one as an alias (links already published keep paying); a slug another affiliate holds, as its slug or an alias, answers 409.",
    pathParams: z.object({ id: z.string().describe('Affiliate id (UUID).') }),
    body: UpdateAffiliateBody,
    responses: {
      200: AffiliateDetailEnvelope,
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
      409: errorResponses[409],
    },
  },
  erase: {
    method: 'POST',
    path: '/api/affiliates/:id/erase',
    summary: "Erase a partner's personal details",
    description:
      "On the partner's request: erases the personal details of the person behind this membership in every membership of the same e-mail in the organization. The name and payout e-mail are removed, the e-mail is replaced by a placeholder (`erased-<affiliate id>@erased.invalid`), the portal sign-in details and sessions are deleted, and the memberships are disabled: the partner can no longer sign in, and their links no longer attribute. The ledger stays: conversions, commission entries and payouts keep their amounts. The outbox's copies of the affiliate are erased too. A repeat answers the erased membership.",
    pathParams: z.object({ id: z.string().describe('Affiliate id (UUID).') }),
    body: c.noBody(),
    responses: {
      200: AffiliateEnvelope,
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
    },
  },
});

export type Affiliate = z.infer<typeof Affiliate>;
export type AffiliateStatus = z.infer<typeof AffiliateStatus>;
export type UpdateAffiliateBody = z.infer<typeof UpdateAffiliateBody>;
