import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { TAX_FORM_REVIEW_ACCESS, restricted } from '../common/access.js';
import { ErrorBody, errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { Money, Timestamp, Uuid } from '../common/primitives.js';

/**
 * Tax forms (shared/spec/payout-rails.md, "Partners"): the partner uploads a W-9, W-8BEN or
 * W-8BEN-E in the portal, stored encrypted; the merchant sees its status on the affiliate, reads the
 * document and accepts or rejects it. A program with `require_tax_form` pays no one whose form is not
 * accepted. A tax form is the partner's (one e-mail with the merchant): submitting one, accepting or
 * rejecting it applies to every program of that partner.
 */
const c = initContract();

export const TAX_FORM_MAX_BYTES = 10 * 1024 * 1024;
export const TAX_FORM_CONTENT_TYPES = ['application/pdf', 'image/png', 'image/jpeg'] as const;

export const TaxFormKind = z
  .enum(['w9', 'w8ben', 'w8bene'])
  .describe(
    '`w9`: IRS Form W-9 (US persons and entities); `w8ben`: Form W-8BEN (individuals outside the US); `w8bene`: Form W-8BEN-E (entities outside the US).',
  );

export const TaxFormStatus = z
  .enum(['missing', 'submitted', 'accepted', 'rejected'])
  .describe(
    "`missing`: none on file; `submitted`: waiting for the merchant's review; `accepted`: on file; `rejected`: the merchant refused it (`rejection_reason` says why), the partner uploads a corrected one.",
  );

export const TaxForm = z
  .object({
    status: TaxFormStatus,
    kind: TaxFormKind.nullable().describe('The form on file; null when `missing`.'),
    submitted_at: Timestamp.nullable().describe('When the partner uploaded it; null when `missing`.'),
    decided_at: Timestamp.nullable().describe('When the merchant accepted or rejected it; null until then.'),
    rejection_reason: z
      .string()
      .nullable()
      .describe('Why the merchant rejected it, as the partner sees it; null unless `rejected`.'),
  })
  .describe("The partner's tax form, as both sides see it (the document itself only through the owner-only download).");

export const PayoutHoldReason = z
  .enum(['tax_form_missing', 'tax_form_submitted', 'tax_form_rejected'])
  .describe(
    "Why payouts wait: the program requires an accepted tax form (`require_tax_form`) and the partner's form is missing, waiting for review, or rejected.",
  );

export const PayoutHold = z
  .object({
    reason: PayoutHoldReason,
    message: z.string().describe('The reason in words, e.g. "Payout held: tax form missing".'),
  })
  .describe('Why payouts of this affiliate are held; null when nothing holds them.');

export const HeldPayout = z
  .object({
    affiliate_id: Uuid.describe('The affiliate not paid.'),
    program_id: Uuid.describe('The program whose `require_tax_form` holds the payout.'),
    currency: z.string().describe('ISO 4217 code.'),
    amount: Money.describe(
      'The net amount that would have been paid: its commissions stay `approved` for a later run.',
    ),
    commission_count: z.number().int().describe('Commissions held.'),
    reason: PayoutHoldReason,
    message: z.string().describe('The reason in words, e.g. "Payout held: tax form submitted".'),
  })
  .describe('A payout not created because its program requires an accepted tax form.');

export const TaxFormView = z
  .object({
    affiliate_id: Uuid.describe('The affiliate (membership).'),
    tax_form: TaxForm,
    payout_hold: PayoutHold.nullable(),
    uploads_accepted: z
      .boolean()
      .describe(
        'Whether partners can upload tax forms: false while the service has no ENCRYPTION_KEY (a tax document is never stored unencrypted), in which case the merchant sets one first.',
      ),
  })
  .describe("An affiliate's tax form and whether it holds their payouts.");

const TaxFormViewEnvelope = z.object({ success: z.literal(true), data: TaxFormView });
const idParam = z.object({ id: z.string().describe('Affiliate id (UUID).') });
const noForm = ErrorBody.describe('The partner has submitted no tax form yet.');

/** What any dashboard user (and the API key) reads: the status and the hold, never the document. */
export const taxFormsContract = c.router({
  get: {
    method: 'GET',
    path: '/api/affiliates/:id/tax-form',
    summary: "An affiliate's tax form status",
    description:
      "The partner's tax form (status, kind, dates, rejection reason) and, when the affiliate's program requires an accepted form (`require_tax_form`) and theirs is not, why their payouts are held.",
    pathParams: idParam,
    responses: { 200: TaxFormViewEnvelope, 403: errorResponses[403], 404: errorResponses[404] },
  },
});

/**
 * Reading and deciding on the document: a tax form carries a taxpayer identification number, so
 * only an `owner` (or the API key) sees it and decides on it (common/access.ts).
 */
export const taxFormReviewContract = c.router(
  restricted(TAX_FORM_REVIEW_ACCESS, {
    document: {
      method: 'GET',
      path: '/api/affiliates/:id/tax-form/document',
      summary: "Download an affiliate's tax form",
      description:
        'The document as the partner uploaded it (`Content-Type` `application/pdf`, `image/png` or `image/jpeg`, with its file name in `Content-Disposition`), decrypted. 404 when none is on file.',
      pathParams: idParam,
      responses: {
        200: c.otherResponse({
          contentType: 'application/octet-stream',
          body: z.any().describe('The document, as uploaded: a PDF, PNG or JPEG (its own Content-Type).'),
        }),
        403: errorResponses[403],
        404: errorResponses[404],
      },
    },
    accept: {
      method: 'POST',
      path: '/api/affiliates/:id/tax-form/accept',
      summary: "Accept an affiliate's tax form",
      description:
        'Accepts the form on file, for every program of the partner: payouts that `require_tax_form` held are created by the next `POST /api/payouts`. Accepting an accepted form changes nothing. 409 when no form was submitted.',
      pathParams: idParam,
      body: z.object({}).default({}),
      responses: {
        200: TaxFormViewEnvelope,
        ...jsonBodyErrorResponses,
        403: errorResponses[403],
        404: errorResponses[404],
        409: noForm,
      },
    },
    reject: {
      method: 'POST',
      path: '/api/affiliates/:id/tax-form/reject',
      summary: "Reject an affiliate's tax form",
      description:
        'Rejects the form on file (an accepted one too), for every program of the partner, with a reason the partner sees in the portal; programs that `require_tax_form` hold their payouts until a new form is accepted. 409 when no form was submitted.',
      pathParams: idParam,
      body: z.object({
        reason: z
          .string()
          .trim()
          .min(1)
          .max(1_000)
          .describe('What is wrong, as the partner will read it (e.g. "The TIN is missing").'),
      }),
      responses: {
        200: TaxFormViewEnvelope,
        ...jsonBodyErrorResponses,
        403: errorResponses[403],
        404: errorResponses[404],
        409: noForm,
      },
    },
  }),
);

export const TaxFormUpload = z.object({
  kind: TaxFormKind,
  file_name: z.string().trim().min(1).max(255).describe('The file name, as the merchant will see it when downloading.'),
  content_base64: z
    .string()
    .min(1)
    .max(Math.ceil(TAX_FORM_MAX_BYTES / 3) * 4 + 4)
    .describe(
      'The document, base64: a PDF, PNG or JPEG (told by its first bytes, whatever its name says) of at most 10 MiB.',
    ),
});

export const PartnerTaxFormHold = z
  .object({
    program_id: Uuid.describe('A program of yours that requires an accepted tax form.'),
    program_name: z.string().describe('Its name.'),
    reason: PayoutHoldReason,
    message: z.string().describe('What holds your payouts in this program, and what to do about it.'),
  })
  .describe('A program that holds your payouts until your tax form is accepted.');

export const PartnerTaxForm = z
  .object({
    tax_form: TaxForm,
    required: z.boolean().describe('Whether any of your programs requires an accepted tax form before paying you.'),
    holds: z.array(PartnerTaxFormHold).describe('Your programs that hold your payouts now (empty: none).'),
    uploads_accepted: z
      .boolean()
      .describe(
        'Whether this merchant accepts tax forms here now: false until they have set up encrypted document storage (upload refused with 409).',
      ),
  })
  .describe('Your tax form, and where its absence holds your payouts.');

const PartnerTaxFormEnvelope = z.object({ success: z.literal(true), data: PartnerTaxForm });
const crossSite = ErrorBody.describe(
  'Cross-site request refused: state-changing portal requests must come from the portal itself (`Origin`).',
);

/** The portal's tax form routes (spread into the partner session's router, resources/partner.ts). */
export const partnerTaxFormRoutes = {
  taxForm: {
    method: 'GET',
    path: '/partner/api/tax-form',
    summary: 'My tax form',
    description:
      'Your tax form (status, kind, the rejection reason) and the programs that hold your payouts until it is accepted.',
    responses: { 200: PartnerTaxFormEnvelope },
  },
  submitTaxForm: {
    method: 'POST',
    path: '/partner/api/tax-form',
    summary: 'Submit my tax form',
    description:
      'Uploads a W-9, W-8BEN or W-8BEN-E (a PDF, PNG or JPEG of at most 10 MiB, base64 in JSON), stored encrypted, for every program of yours with this merchant; it replaces the form on file (a rejected one, or an accepted one, which then waits for review again). 400 when the file is not a PDF, PNG or JPEG, 413 when it is larger than 10 MiB, 409 while the merchant accepts no tax forms (`uploads_accepted` false).',
    body: TaxFormUpload,
    responses: {
      201: PartnerTaxFormEnvelope,
      ...jsonBodyErrorResponses,
      403: crossSite,
      413: ErrorBody.describe('The document is larger than 10 MiB (or the request body than 13.4 MiB).'),
      409: ErrorBody.describe(
        'This merchant does not accept tax forms online yet (`uploads_accepted` false): a tax document is never stored unencrypted, and the merchant has not set up encrypted storage (ENCRYPTION_KEY) yet.',
      ),
    },
  },
} as const;

export type TaxForm = z.infer<typeof TaxForm>;
export type TaxFormKind = z.infer<typeof TaxFormKind>;
export type TaxFormView = z.infer<typeof TaxFormView>;
export type PayoutHold = z.infer<typeof PayoutHold>;
export type PayoutHoldReason = z.infer<typeof PayoutHoldReason>;
export type HeldPayout = z.infer<typeof HeldPayout>;
export type PartnerTaxForm = z.infer<typeof PartnerTaxForm>;
export type PartnerTaxFormHold = z.infer<typeof PartnerTaxFormHold>;
