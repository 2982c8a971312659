import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { Slug } from './affiliates.js';
import { ReportInterval } from './reports.js';
import { ErrorBody, errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { Timestamp, TimestampInput, Uuid, TrimmedEmail } from '../common/primitives.js';
import { partnerTaxFormRoutes } from './tax-forms.js';
import { partnerPayoutRoutes } from './payout-settings.js';
import {
  tooMany,
  crossSite,
  noSession,
  OrganizationId,
  ProgramId,
  JoinPage,
  PortalOrganization,
  ApplicationBody,
  Application,
  SlugAvailability,
  EmailNotifications,
  Partner,
  PartnerEnvelope,
  PartnerCustomer,
  PartnerCommission,
  PartnerPayout,
  PartnerBalance,
  PartnerPoint,
  PartnerTotals,
  partnerQuery,
} from './partner-schemas.js';

const c = initContract();

export {
  PartnerProgram,
  JoinPage,
  PortalOrganization,
  ApplicationBody,
  Application,
  SlugAvailability,
  EmailNotifications,
  PartnerMembership,
  Partner,
  MaskedCustomer,
  PartnerCustomer,
  PartnerCommission,
  PartnerPayout,
  PartnerBalance,
  CurrencyAmount,
  PartnerPoint,
  PartnerTotals,
} from './partner-schemas.js';

/**
 * The partner portal's routes (spec/ledger.md, "People"): `/partner/api/*`, never the merchant's
 * `/api/*`. The public ones (a program's join page, slug availability, applying, asking for a
 * sign-in link, signing in) take no credential; the others take a partner session (the HttpOnly
 * cookie `svc.partner_session`, set by signing in) and see only that partner's rows: the
 * memberships of one e-mail in one organization.
 */
export const partnerPublicContract = c.router(
  {
    joinPage: {
      method: 'GET',
      path: '/partner/api/organizations/:organizationId/programs/:programId',
      summary: "A program's join page",
      description:
        'What the public join page shows: the merchant, the program, its commission, hold, minimum payout and terms, and whether it takes applications (`signup`).',
      pathParams: z.object({ organizationId: OrganizationId, programId: ProgramId }),
      responses: { 200: z.object({ success: z.literal(true), data: JoinPage }), 404: errorResponses[404] },
    },
    portalOrganization: {
      method: 'GET',
      path: '/partner/api/organizations/:organizationId',
      summary: 'The merchant of a partner portal',
      description:
        'Who the portal is for, as its public pages name it (the sign-in page: "Sign in to Shop\'s partner portal"). 404 for an organization that does not exist.',
      pathParams: z.object({ organizationId: OrganizationId }),
      responses: { 200: z.object({ success: z.literal(true), data: PortalOrganization }), 404: errorResponses[404] },
    },
    slugAvailability: {
      method: 'GET',
      path: '/partner/api/organizations/:organizationId/slugs/:slug',
      summary: 'Is a referral slug free?',
      description:
        'Checks a desired slug as an applicant types it: 400 naming `slug` when malformed, else whether it is free with this merchant. Rate limited per address.',
      pathParams: z.object({ organizationId: OrganizationId, slug: Slug }),
      responses: {
        200: z.object({ success: z.literal(true), data: SlugAvailability }),
        400: errorResponses[400],
        404: errorResponses[404],
        429: tooMany,
      },
    },
    apply: {
      method: 'POST',
      path: '/partner/api/organizations/:organizationId/programs/:programId/applications',
      summary: 'Apply to a program',
      description:
        'Joins the program: `active` at once when its `signup` is `open`, `pending` until the merchant approves when it is `approval`; a `closed` program answers 403. A sign-in link is e-mailed to the applicant. An e-mail already in the program gets the same answer, and an e-mail saying it already is a partner (with a sign-in link) instead of a second membership. 409 when the slug is taken. Rate limited per address.',
      pathParams: z.object({ organizationId: OrganizationId, programId: ProgramId }),
      body: ApplicationBody,
      responses: {
        201: z.object({ success: z.literal(true), data: z.object({ application: Application }) }),
        ...jsonBodyErrorResponses,
        403: ErrorBody.describe(
          'The program takes no applications (`signup: closed`), or the request came from another site.',
        ),
        404: errorResponses[404],
        409: errorResponses[409],
        429: tooMany,
      },
    },
    requestSignInLink: {
      method: 'POST',
      path: '/partner/api/organizations/:organizationId/sign-in-links',
      summary: 'E-mail me a sign-in link',
      description:
        "E-mails a one-time sign-in link (valid 15 minutes, once) to a partner of this merchant. The answer is the same whether or not the e-mail is a partner's (no one learns who is). Rate limited per e-mail and per address.",
      pathParams: z.object({ organizationId: OrganizationId }),
      body: z.object({ email: TrimmedEmail.describe('The e-mail you joined with.') }),
      responses: {
        202: z.object({
          success: z.literal(true),
          data: z.object({ expires_in_seconds: z.number().int().describe('How long the link is valid.') }),
        }),
        ...jsonBodyErrorResponses,
        403: crossSite,
        404: errorResponses[404],
        429: tooMany,
      },
    },
    signIn: {
      method: 'POST',
      path: '/partner/api/sign-in',
      summary: 'Sign in with an e-mailed link',
      description:
        "Exchanges the link's token for a session: sets the HttpOnly cookie `svc.partner_session` (SameSite=Lax). A used, expired or unknown token answers 401. Rate limited per address.",
      body: z.object({
        organization_id: Uuid.describe('The organization of the link.'),
        token: z.string().min(16).max(200).describe('The token of the link.'),
      }),
      responses: {
        200: PartnerEnvelope,
        ...jsonBodyErrorResponses,
        401: ErrorBody.describe('This sign-in link is not valid: it was used, has expired, or never existed.'),
        403: crossSite,
        429: tooMany,
      },
    },
    session: {
      method: 'GET',
      path: '/partner/api/session',
      summary: 'Who is signed in, if anyone',
      description:
        'The signed-in partner, as `GET /partner/api/me` gives it, or `partner: null` without a session (never 401): the portal asks it first, to show the partner their page or the sign-in form.',
      responses: {
        200: z.object({
          success: z.literal(true),
          data: z.object({ partner: Partner.nullable().describe('The signed-in partner; null: not signed in.') }),
        }),
      },
    },
    signOut: {
      method: 'POST',
      path: '/partner/api/sign-out',
      summary: 'Sign out',
      description: 'Ends the partner session (everywhere it is used) and clears its cookie.',
      body: z.object({}).optional(),
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({}) }),
        ...jsonBodyErrorResponses,
        403: crossSite,
      },
    },
  },
  // Any method may carry a body, read (and limited) before the route's own rules.
  { commonResponses: { 413: errorResponses[413] } },
);

export const partnerContract = c.router(
  {
    me: {
      method: 'GET',
      path: '/partner/api/me',
      summary: 'The signed-in partner',
      description:
        'Who is signed in, with which merchant, their payout e-mail and their programs with their referral links.',
      responses: { 200: PartnerEnvelope },
    },
    updateMe: {
      method: 'PATCH',
      path: '/partner/api/me',
      summary: 'Change my payout e-mail or e-mail settings',
      description:
        'Sets where payouts go, and which e-mails come (a commission earned, a payout sent: each on by default), for every program of the partner with this merchant. Fields left out are unchanged; at least one is given.',
      body: z
        .object({
          payout_email: TrimmedEmail.optional().describe('Where payouts go (PayPal or Wise e-mail).'),
          email_notifications: EmailNotifications.partial()
            .strict()
            .optional()
            .describe('The e-mails to turn on (true) or off (false); a setting left out is unchanged.'),
        })
        .refine((body) => body.payout_email !== undefined || body.email_notifications !== undefined, {
          message: 'Give payout_email or email_notifications',
        }),
      responses: { 200: PartnerEnvelope, ...jsonBodyErrorResponses, 403: crossSite },
    },
    link: {
      method: 'GET',
      path: '/partner/api/link',
      summary: 'Build a referral link',
      description:
        "A referral link to any page of the merchant's site: the page with `ref=<slug>` added. 400 naming `url` when it is not on the program's website (its host or a subdomain).",
      query: z.object({
        program_id: Uuid.describe('Your program.'),
        url: z
          .string()
          .min(1)
          .max(2_000)
          .describe("A page of the merchant's site, e.g. `https://shop.example.com/pricing`."),
      }),
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ url: z.string().describe('The referral link.') }) }),
        400: errorResponses[400],
        404: errorResponses[404],
      },
    },
    stats: {
      method: 'GET',
      path: '/partner/api/stats',
      summary: 'My activity over time',
      description:
        'Clicks, signups, conversions and earnings per day, week or month (UTC), oldest first, periods without activity included, and their totals over the range; at most 366 days.',
      query: z.object({
        ...partnerQuery,
        from: TimestampInput.describe('Start, inclusive.'),
        to: TimestampInput.describe('End, exclusive; after `from`, at most 366 days later.'),
        interval: ReportInterval.optional().describe('Default `day`.'),
      }),
      responses: {
        200: z.object({
          success: z.literal(true),
          data: z.object({ interval: ReportInterval, points: z.array(PartnerPoint), totals: PartnerTotals }),
        }),
        400: errorResponses[400],
        404: errorResponses[404],
      },
    },
    customers: {
      method: 'GET',
      path: '/partner/api/customers',
      summary: 'My customers',
      description: 'The customers the partner referred, newest first, masked (never an e-mail).',
      query: PageQuery.extend(partnerQuery),
      responses: {
        200: z.object({
          success: z.literal(true),
          data: z.object({ customers: z.array(PartnerCustomer), next_cursor: NextCursor }),
        }),
        400: errorResponses[400],
        404: errorResponses[404],
      },
    },
    commissions: {
      method: 'GET',
      path: '/partner/api/commissions',
      summary: 'My commissions',
      description: "The partner's commission entries, newest first, with the date each pending one is approved.",
      query: PageQuery.extend(partnerQuery),
      responses: {
        200: z.object({
          success: z.literal(true),
          data: z.object({ commissions: z.array(PartnerCommission), next_cursor: NextCursor }),
        }),
        400: errorResponses[400],
        404: errorResponses[404],
      },
    },
    payouts: {
      method: 'GET',
      path: '/partner/api/payouts',
      summary: 'My payouts and balance',
      description:
        "The partner's payouts, newest first, and (on the first page) their balance per program and currency with when the next payout is due given the program's minimum.",
      query: PageQuery.extend(partnerQuery),
      responses: {
        200: z.object({
          success: z.literal(true),
          data: z.object({
            payouts: z.array(PartnerPayout),
            balances: z.array(PartnerBalance),
            next_cursor: NextCursor,
          }),
        }),
        400: errorResponses[400],
        404: errorResponses[404],
      },
    },
    ...partnerTaxFormRoutes,
    ...partnerPayoutRoutes,
  },
  {
    commonResponses: {
      401: noSession,
      413: errorResponses[413],
      429: ErrorBody.describe('Too many requests; retry after `Retry-After` seconds.'),
    },
  },
);

export const partnerInvitationsContract = c.router({
  invite: {
    method: 'POST',
    path: '/api/affiliates/:id/invitation',
    summary: 'Invite an affiliate to the partner portal',
    description:
      "E-mails the affiliate a link that signs them in to the partner portal (valid 7 days, once), where they see their links, customers (masked), commissions and payouts. The link is never in the answer: only the partner's mailbox has it.",
    pathParams: z.object({ id: z.string().describe('Affiliate id (UUID).') }),
    body: z.object({}).optional(),
    responses: {
      202: z.object({
        success: z.literal(true),
        data: z.object({ email: z.string().describe('Where it was sent.'), expires_at: Timestamp }),
      }),
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
    },
  },
});
