import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { jsonBodyErrorResponses } from '../common/errors.js';

const c = initContract();

export const BRANDING_DEFAULT_COLOR = '#2563eb';

export const BrandLogoUrl = z
  .string()
  .trim()
  .max(2048)
  .url('Expected an https:// URL of an image')
  .refine((v) => v.startsWith('https://'), 'Expected an https:// URL of an image (http is not shown in e-mails)')
  .describe("The logo's address (https), shown in the partner portal's header and at the top of e-mails to partners.");

export const BrandColor = z
  .string()
  .trim()
  .regex(/^#[0-9a-fA-F]{6}$/, 'Expected a colour as #rrggbb, e.g. #0a7c4a')
  .transform((v) => v.toLowerCase())
  .describe("The accent colour, `#rrggbb`: the portal's header and buttons, and the e-mails' header and links.");

export const SenderName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine((v) => !/[\r\n<>]/.test(v), 'Expected a name without line breaks or angle brackets (< >)')
  .describe("The name e-mails to partners come from (the From display name; the address stays MAIL_FROM's).");

export const Branding = z
  .object({
    logo_url: z.string().nullable().describe('The logo (https URL); null: none, the organization name is shown.'),
    brand_color: z
      .string()
      .nullable()
      .describe(`The accent colour (#rrggbb); null: the default, ${BRANDING_DEFAULT_COLOR}.`),
    sender_name: z.string().nullable().describe("The From name of e-mails to partners; null: the organization's name."),
  })
  .describe("The merchant's branding: how the partner portal and e-mails to partners look.");

export const UpdateBrandingBody = z
  .object({
    logo_url: BrandLogoUrl.nullable().optional(),
    brand_color: BrandColor.nullable().optional(),
    sender_name: SenderName.nullable().optional(),
  })
  .strict()
  .describe('The fields to change; a field left out stays as it is, `null` clears it.');

const BrandingEnvelope = z.object({ success: z.literal(true), data: z.object({ branding: Branding }) });

export const brandingContract = c.router({
  get: {
    method: 'GET',
    path: '/api/branding',
    summary: "The organization's branding",
    description:
      'The logo, accent colour and sender name the partner portal and e-mails to partners show. The same in test and live mode (test mode shows the live branding).',
    responses: { 200: BrandingEnvelope },
  },
  update: {
    method: 'PATCH',
    path: '/api/branding',
    summary: "Change the organization's branding",
    description:
      'Sets the logo (an https URL), the accent colour (#rrggbb) and the sender name (no line breaks or angle brackets) of the partner portal and e-mails to partners. 400 naming the field for an invalid value. Applies to both modes.',
    body: UpdateBrandingBody,
    responses: { 200: BrandingEnvelope, ...jsonBodyErrorResponses },
  },
});

export type Branding = z.infer<typeof Branding>;
export type UpdateBrandingBody = z.infer<typeof UpdateBrandingBody>;
