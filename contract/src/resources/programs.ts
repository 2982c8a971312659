import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { CurrencyCode, Livemode, Timestamp, Uuid } from '../common/primitives.js';
import { programJoiningFields } from './program-joining.js';

const c = initContract();

export const CommissionTiers = z
  .object({
    metric: z
      .enum(['customers', 'revenue'])
      .describe(
        "`customers`: the affiliate's distinct customers with a paid conversion; `revenue`: the gross amount of its conversions in the program's currency; both over conversions whose occurred_at is in the previous calendar month, UTC.",
      ),
    tiers: z
      .array(
        z.object({
          from: z
            .number()
            .finite()
            .min(0)
            .max(1_000_000_000)
            .describe("The metric's value from which this tier applies."),
          commission_value: z
            .number()
            .finite()
            .min(0)
            .max(1_000_000)
            .describe("The rate from this tier on, in the program's `commission_type` (at most 100 for percent)."),
        }),
      )
      .min(1)
      .max(20)
      .describe('The tiers, in any order.'),
  })
  .describe(
    'Commission tiers: e.g. `{ "metric": "customers", "tiers": [{ "from": 10, "commission_value": 30 }] }` pays 30 from 10 customers in the previous month.',
  );

export const FraudRules = z
  .object({
    self_referral: z
      .boolean()
      .describe(
        "Hold a sale whose customer's e-mail is the affiliate's own (case-insensitive), or whose click came from the address and user agent of the partner's own portal sign-in. Default true.",
      ),
    disposable_email: z
      .boolean()
      .describe(
        "Hold a sale whose customer's e-mail domain is on the maintained disposable-domain list. Default true.",
      ),
    click_flood: z
      .boolean()
      .describe(
        "More than 10 clicks within 60 seconds from one address on one link: the surplus is stored suppressed, answered with the cookie id of that address's first click in the window, and counted nowhere. Default true.",
      ),
    fast_conversion: z
      .boolean()
      .describe('Hold a click-attributed sale whose occurred_at is within 10 seconds of its click. Default false.'),
  })
  .describe(
    'Fraud rules: which signals put a commission `on_hold` (held entries are released by approve, or rejected).',
  );

export const CommissionType = z
  .enum(['percent', 'flat'])
  .describe(
    '`percent`: commission_value percent of each conversion amount; `flat`: commission_value per paid conversion.',
  );

const programFields = {
  name: z.string().min(1).max(200).describe('Program name.'),
  commission_type: CommissionType,
  commission_value: z
    .number()
    .finite()
    .min(0)
    .max(1_000_000)
    .describe(
      'Percent of `amount` when commission_type is `percent` (30 means 30 %), else a flat amount in the program currency per paid conversion. At most 100 for `percent` (a commission never exceeds the charge), at most 1000000 for `flat`.',
    ),
  click_window_days: z
    .number()
    .int()
    .min(0)
    .max(3650)
    .describe(
      'Click attribution window in days: a conversion or customer attributed by a click older than this answers 410.',
    ),
  commission_window_months: z
    .number()
    .int()
    .min(1)
    .max(1200)
    .nullable()
    .describe(
      "Commission window in months, counted from the customer's first conversion; after it, recurring charges earn no commission and the customer becomes `capped`. null means lifetime.",
    ),
  currency: CurrencyCode,
  hold_days: z
    .number()
    .int()
    .min(0)
    .max(365)
    .describe(
      "Days a sale's commission stays `pending` after the sale's occurred_at, while a refund is still likely; then it is `approved` (with auto_approve).",
    ),
  auto_approve: z
    .boolean()
    .describe(
      'true: a pending commission becomes `approved` by itself when its hold ends; false: it waits for POST /api/commissions/{id}/approve.',
    ),
  minimum_payout: z
    .number()
    .finite()
    .min(0)
    .max(1_000_000_000)
    .describe(
      "Smallest net amount, in the program's currency, that POST /api/payouts pays an affiliate; below it the commissions wait for the next payout. Nothing is converted between currencies: commissions in another currency (sales reported in it) are paid at any positive net.",
    ),
  attribution_model: z
    .enum(['last_click', 'first_click'])
    .describe(
      "Which referral keeps a visitor. `last_click`: every new visit with a referral replaces the `svc_aff` cookie. `first_click`: a valid cookie of this organization (a click within its program's click window) is kept: the snippet sends it with the click, which is recorded for the second partner but answered with the first click's `cookie_id`; POST /api/clicks does the same with `cookie_id`.",
    ),
  commission_max_conversions: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .nullable()
    .describe(
      "Recurring cap by count: a customer's first N paid conversions earn; the next earns nothing and makes the customer `capped`. With `commission_window_months`, whichever comes first caps. null: no cap by count. Counting starts when the cap is set (customers' earlier paid conversions are counted then).",
    ),
  commission_tiers: CommissionTiers.nullable().describe(
    "Tiered rates: the affiliate's metric over the previous calendar month (UTC) of each sale's occurred_at picks the highest tier whose `from` it reaches; below every tier, `commission_value`. A tier reached mid-month pays from the next month on. null: no tiers.",
  ),
  fraud_rules: FraudRules,
  ...programJoiningFields,
  require_tax_form: z
    .boolean()
    .describe(
      "true: POST /api/payouts creates no payout for an affiliate whose tax form is not `accepted`; their commissions stay `approved`, the answer lists them in `held`, and both the dashboard and the partner's portal say why.",
    ),
};

export const Program = z
  .object({
    id: Uuid.describe('Program id.'),
    ...programFields,
    created_at: Timestamp,
    updated_at: Timestamp,
    livemode: Livemode,
  })
  .describe('Program');

export const CreateProgramBody = z.object({
  name: programFields.name,
  commission_type: programFields.commission_type.optional().describe('Default `percent`.'),
  commission_value: programFields.commission_value,
  click_window_days: programFields.click_window_days
    .optional()
    .describe('Click attribution window in days; default 60.'),
  commission_window_months: programFields.commission_window_months
    .optional()
    .describe('Commission window in months from the first conversion; default null (lifetime).'),
  currency: programFields.currency.optional().describe('ISO 4217 currency code; default USD.'),
  hold_days: programFields.hold_days.optional().describe('Hold before a commission is approved, in days; default 30.'),
  auto_approve: programFields.auto_approve.optional().describe('Default true.'),
  minimum_payout: programFields.minimum_payout.optional().describe('Default 0: every positive net amount is paid.'),
  attribution_model: programFields.attribution_model.optional().describe('Default `last_click`.'),
  commission_max_conversions: programFields.commission_max_conversions
    .optional()
    .describe('Default null (no cap by count).'),
  commission_tiers: programFields.commission_tiers.optional().describe('Default null (no tiers).'),
  fraud_rules: FraudRules.partial()
    .optional()
    .describe(
      'Rules to turn on or off; a partial object changes only the rules it names. Default self_referral, disposable_email and click_flood on, fast_conversion off.',
    ),
  signup: programFields.signup.optional().describe('Default `approval`.'),
  terms: programFields.terms.optional().describe('Default null: no terms to accept.'),
  website_url: programFields.website_url.optional().describe('Default null.'),
  require_tax_form: programFields.require_tax_form.optional().describe('Default false.'),
});

export const UpdateProgramBody = CreateProgramBody.partial();

const ProgramEnvelope = z.object({ success: z.literal(true), data: z.object({ program: Program }) });

export const programsContract = c.router({
  create: {
    method: 'POST',
    path: '/api/programs',
    summary: 'Create a program',
    description: 'Creates an affiliate program with its commission rule and windows.',
    body: CreateProgramBody,
    responses: { 201: ProgramEnvelope, ...jsonBodyErrorResponses },
  },
  list: {
    method: 'GET',
    path: '/api/programs',
    summary: 'List programs',
    description: 'Lists the programs of the organization, oldest first, with cursor pagination.',
    query: PageQuery,
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({ programs: z.array(Program), next_cursor: NextCursor }),
      }),
      400: errorResponses[400],
    },
  },
  get: {
    method: 'GET',
    path: '/api/programs/:id',
    summary: 'Get a program',
    description: 'Returns one program by id.',
    pathParams: z.object({ id: z.string().describe('Program id (UUID).') }),
    responses: { 200: ProgramEnvelope, 403: errorResponses[403], 404: errorResponses[404] },
  },
  update: {
    method: 'PATCH',
    path: '/api/programs/:id',
    summary: 'Update a program',
    description:
      'Changes any of the program fields. Commission already computed on past conversions is not recomputed.',
    pathParams: z.object({ id: z.string().describe('Program id (UUID).') }),
    body: UpdateProgramBody,
    responses: { 200: ProgramEnvelope, ...jsonBodyErrorResponses, 403: errorResponses[403], 404: errorResponses[404] },
  },
});

export type Program = z.infer<typeof Program>;
