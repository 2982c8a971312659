// The partner portal's schemas and shared route pieces; its routes are in partner.ts.
import { z } from 'zod';
import { ErrorBody } from '../common/errors.js';
import { Livemode, Money, Timestamp, Uuid, TrimmedEmail } from '../common/primitives.js';
import { AffiliateStatus, Slug } from './affiliates.js';
import { CommissionType } from './programs.js';
import { ProgramSignup } from './program-joining.js';
import { PayoutHold } from './tax-forms.js';

export const tooMany = ErrorBody.describe(
  'Too many requests from this address (or for this e-mail); retry after `Retry-After` seconds.',
);
export const crossSite = ErrorBody.describe(
  'Cross-site request refused: state-changing portal requests must come from the portal itself (`Origin`).',
);
export const noSession = ErrorBody.describe('Not signed in to the partner portal (no session, or it ended).');

export const OrganizationId = z.string().describe('Organization id (UUID): public, as in the snippet tag.');
export const ProgramId = z.string().describe('Program id (UUID).');

export const PartnerProgram = z
  .object({
    id: Uuid.describe('Program id.'),
    name: z.string().describe('Program name.'),
    commission_type: CommissionType,
    commission_value: z
      .number()
      .describe('Percent of each sale (`percent`) or an amount per paid conversion (`flat`).'),
    currency: z.string().describe("The program's currency."),
    click_window_days: z.number().int().describe('How long after a click a signup is still credited.'),
    hold_days: z.number().int().describe('Days a commission stays `pending` before it is approved.'),
    minimum_payout: Money.describe('Smallest approved balance paid out, in the program currency.'),
    signup: ProgramSignup,
    terms: z.string().nullable().describe("The program's terms (plain text); null: none."),
    website_url: z
      .string()
      .nullable()
      .describe("The merchant's site referral links point to; null: not set by the merchant."),
    livemode: Livemode,
  })
  .describe('What a partner (or an applicant) sees of a program.');

export const JoinPage = z
  .object({
    organization: z.object({ id: Uuid, name: z.string() }).describe('The merchant.'),
    program: PartnerProgram,
  })
  .describe("A program's public join page.");

export const PortalOrganization = z
  .object({
    organization: z.object({ id: Uuid, name: z.string() }).describe('The merchant.'),
  })
  .describe('The merchant whose partner portal this is, as its public pages (sign-in) name it.');

export const ApplicationBody = z.object({
  name: z.string().trim().min(1).max(200).describe('Your name, as the merchant will see it.'),
  email: TrimmedEmail.describe('Your e-mail: the sign-in links are sent there.'),
  slug: Slug.describe(
    'The referral slug you want (`?ref=<slug>`): 2 to 64 lowercase letters, digits or "-", unique within the merchant.',
  ),
  payout_email: TrimmedEmail.optional().describe('Where payouts go (PayPal or Wise e-mail); default your e-mail.'),
  accept_terms: z
    .literal(true, { errorMap: () => ({ message: "You must accept the program's terms" }) })
    .optional()
    .describe(
      "Acceptance of the program's terms: must be true when the program has terms (400 naming `accept_terms` otherwise); a program without terms needs none.",
    ),
});

export const Application = z
  .object({
    program_id: Uuid.describe('The program applied to.'),
    email: z.string().describe('The e-mail applied with.'),
    slug: Slug.describe('The slug applied for.'),
    status: AffiliateStatus.describe(
      '`active`: the program is `open`, the links work now; `pending`: the merchant approves applications first.',
    ),
  })
  .describe(
    'An application to a program, as received. The same answer whether or not the e-mail already is a partner of the program (no one learns who is): a partner who applies again gets an e-mail saying so, with a sign-in link, and no second membership.',
  );

export const SlugAvailability = z
  .object({
    slug: Slug,
    available: z.boolean().describe('Whether no partner of this merchant has the slug yet.'),
  })
  .describe('Whether a referral slug is free.');

export const PartnerMembership = z
  .object({
    affiliate_id: Uuid.describe('The membership (affiliate) id.'),
    status: AffiliateStatus,
    slug: Slug,
    aliases: z
      .array(Slug)
      .describe(
        'Your other link tokens, alphabetically: `?ref=<alias>` attributes to you as your slug does (an earlier slug, a link from the platform the merchant came from).',
      ),
    referral_link: z
      .string()
      .nullable()
      .describe('`<website_url>?ref=<slug>`; null when the merchant set no website for the program.'),
    program: PartnerProgram,
    joined_at: Timestamp,
    livemode: Livemode,
  })
  .describe("One of the partner's programs.");

export const EmailNotifications = z
  .object({
    commissions: z.boolean().describe('An e-mail for each commission earned (default true).'),
    payouts: z.boolean().describe('An e-mail for each payout sent (default true).'),
  })
  .describe(
    "Which e-mails the partner gets from the merchant's program, besides sign-in links and answers to applications.",
  );

export const Partner = z
  .object({
    email: z.string().describe('The e-mail the partner signs in with.'),
    name: z.string().nullable().describe('Their name.'),
    payout_email: z.string().describe('Where their payouts go.'),
    email_notifications: EmailNotifications,
    organization: z
      .object({
        id: Uuid,
        name: z.string(),
        logo_url: z.string().nullable().describe("The merchant's logo (https), for the portal's header; null: none."),
        brand_color: z.string().describe("The merchant's accent colour (#rrggbb; the default when they set none)."),
      })
      .describe('The merchant, and how their portal looks.'),
    memberships: z.array(PartnerMembership).describe('Their programs with this merchant, oldest first.'),
    livemode: Livemode,
  })
  .describe('The signed-in partner: one e-mail with one merchant.');

export const PartnerEnvelope = z.object({ success: z.literal(true), data: z.object({ partner: Partner }) });

export const MaskedCustomer = z
  .string()
  .describe(
    "A customer, masked: the id's prefix and its last 4 characters (`cus_…4f2a`), never an e-mail or the whole id.",
  );

export const PartnerCustomer = z
  .object({
    customer: MaskedCustomer,
    program_id: Uuid.describe('The program.'),
    status: z
      .enum(['trial', 'active', 'capped', 'canceled'])
      .describe('`trial`: signed up; `active`: paying; `capped`: no longer earns; `canceled`.'),
    signed_up_at: Timestamp,
    first_conversion_at: Timestamp.nullable().describe('Their first paid conversion; null: none yet.'),
    livemode: Livemode,
  })
  .describe('A customer the partner referred.');

export const PartnerCommission = z
  .object({
    id: Uuid.describe('Commission id.'),
    program_id: Uuid.describe('The program.'),
    type: z
      .enum(['sale', 'clawback', 'adjustment'])
      .describe(
        '`sale`: earned on a conversion; `clawback`: a refund took it back; `adjustment`: set by the merchant.',
      ),
    status: z
      .enum(['pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'])
      .describe('As the merchant sees it now (a `pending` entry whose approval date passed is `approved`).'),
    amount: Money.describe('Amount, exact; negative for a clawback.'),
    currency: z.string().describe('ISO 4217 code.'),
    customer: MaskedCustomer.nullable().describe('The customer of the sale, masked; null for an adjustment.'),
    approves_at: Timestamp.nullable().describe(
      'When a `pending` commission is approved, after the hold; null otherwise.',
    ),
    created_at: Timestamp,
    livemode: Livemode,
  })
  .describe("One of the partner's commission entries.");

export const PartnerPayout = z
  .object({
    id: Uuid.describe('Payout id.'),
    program_id: Uuid.describe('The program.'),
    amount: Money.describe('Net amount paid (or to be paid).'),
    currency: z.string().describe('ISO 4217 code.'),
    status: z
      .enum(['pending', 'processing', 'paid', 'failed', 'canceled'])
      .describe(
        '`pending`: on its way; `processing`: sent, the payment provider has not confirmed it yet; `paid`; `failed`: the provider could not pay it (`failure_reason`; check your payout details: its commissions go into the next payout); `canceled`.',
      ),
    failure_reason: z.string().nullable().describe('Why the payment provider could not pay it; null unless `failed`.'),
    retried_by_payout_id: Uuid.nullable().describe(
      'A `failed` payout the merchant sent again: the payout its commissions went into (listed here too). Null otherwise: the commissions of a failed payout wait for the next payout.',
    ),
    commission_count: z.number().int().describe('Commission entries it pays.'),
    created_at: Timestamp,
    paid_at: Timestamp.nullable(),
    livemode: Livemode,
  })
  .describe('A payout to the partner.');

export const PartnerBalance = z
  .object({
    program_id: Uuid.describe('The program.'),
    currency: z.string().describe('ISO 4217 code of every amount here.'),
    pending: Money.describe('Commissions still in their hold.'),
    on_hold: Money.describe('Commissions held for review by the merchant.'),
    approved: Money.describe('Approved, not yet in a payout: what the next payout pays.'),
    in_payout: Money.describe('In a payout not yet paid.'),
    paid: Money.describe('Paid so far.'),
    minimum_payout: Money.describe("The program's minimum payout (applies in the program's currency)."),
    next_payout: z
      .object({
        state: z
          .enum(['due', 'scheduled', 'short', 'nothing_owed'])
          .describe(
            "`due`: the approved balance reaches the minimum, paid in the merchant's next payout run; `scheduled`: the pending commissions bring it there on `eligible_from`; `short`: `shortfall` more is needed; `nothing_owed`: nothing approved or pending (everything paid, or what is left is under review).",
          ),
        eligible: z
          .boolean()
          .describe("Whether the approved balance reaches the minimum now: paid in the merchant's next payout run."),
        eligible_from: Timestamp.nullable().describe(
          'When the pending commissions, approved as they come out of their hold, bring the balance to the minimum; null when eligible now, or when they are not enough.',
        ),
        shortfall: Money.describe(
          'What is missing to reach the minimum, counting the pending commissions too; 0 when they suffice (and when the minimum is 0).',
        ),
      })
      .describe('When the next payout is due, given the minimum.'),
    payout_hold: PayoutHold.nullable().describe(
      'Why no payout is created for you in this program whatever the balance: it requires an accepted tax form and yours is not (the message says what to do); null: nothing holds it.',
    ),
  })
  .describe("The partner's balance in one program and currency.");

const EARNED_MEANING =
  "Earned: the commission entries that are `pending`, `approved` or `paid`, net of clawbacks and negative adjustments; `reversed` (refunded before payment) and `rejected` entries count nothing, `on_hold` ones are apart (under review). The same figure as `commissions.earned` of the merchant's reports. A sale's entries count in the period of the sale, an adjustment in that of its creation.";

export const CurrencyAmount = z.object({
  currency: z.string().describe('ISO 4217 code.'),
  amount: Money.describe('Exact amount in that currency.'),
});

export const PartnerPoint = z
  .object({
    period: z.string().describe('Start of the period, ISO-8601 UTC.'),
    clicks: z.number().int().describe('Clicks on their links.'),
    signups: z.number().int().describe('Customers who signed up through their links.'),
    conversions: z.number().int().describe('Paid conversions of their customers.'),
    earnings: z
      .array(CurrencyAmount)
      .describe(`What they earned in the period, per currency (currencies with entries only). ${EARNED_MEANING}`),
  })
  .describe("One period of a partner's activity.");

export const PartnerTotals = z
  .object({
    clicks: z.number().int().describe('Clicks on their links over the whole range.'),
    signups: z.number().int().describe('Customers who signed up through their links over the whole range.'),
    conversions: z.number().int().describe('Paid conversions of their customers over the whole range.'),
    earned: z
      .array(CurrencyAmount)
      .describe(
        `What they earned over the whole range, per currency (currencies with entries only). ${EARNED_MEANING}`,
      ),
    on_hold: z
      .array(CurrencyAmount)
      .describe(
        'Commissions of the range held for review by the merchant (a fraud signal fired), per currency with any; not in `earned` until released.',
      ),
  })
  .describe("The partner's activity over the whole range asked for, summed by the service.");

export const partnerQuery = {
  program_id: Uuid.optional().describe('Only this program of yours (404 otherwise); default all of them.'),
};

export type PartnerProgram = z.infer<typeof PartnerProgram>;
export type Partner = z.infer<typeof Partner>;
export type PartnerMembership = z.infer<typeof PartnerMembership>;
export type PartnerCommission = z.infer<typeof PartnerCommission>;
export type PartnerCustomer = z.infer<typeof PartnerCustomer>;
export type PartnerPayout = z.infer<typeof PartnerPayout>;
export type PartnerBalance = z.infer<typeof PartnerBalance>;
export type PartnerPoint = z.infer<typeof PartnerPoint>;
export type PartnerTotals = z.infer<typeof PartnerTotals>;
export type JoinPage = z.infer<typeof JoinPage>;
export type EmailNotifications = z.infer<typeof EmailNotifications>;
export type PortalOrganization = z.infer<typeof PortalOrganization>;
export type Application = z.infer<typeof Application>;
