import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { jsonBodyErrorResponses } from '../common/errors.js';

const c = initContract();

/** At most this many link parameters per organization (each is looked for on every landing page). */
export const LINK_PARAMS_MAX = 10;

/**
 * A query-parameter name safe to look for in any URL and to print in a page: lowercase letters,
 * digits, `_` and `-`, starting with a letter or `_` (FirstPromoter's `_by`), at most 32
 * characters. The database holds the same rule (Migration20270123000000_link_params).
 */
export const LINK_PARAM_PATTERN = /^[a-z_][a-z0-9_-]{0,31}$/;

export const LinkParam = z
  .string()
  .regex(
    LINK_PARAM_PATTERN,
    'must be a query-parameter name of 1 to 32 lowercase letters, digits, "_" or "-", starting with a letter or "_"',
  )
  .describe('A query-parameter name, e.g. `ref` or `via`.');

export const LinkParams = z
  .array(LinkParam)
  .describe(
    "The query parameters whose value names a partner in a link (`?ref=ada`, `?via=ada`), in the order they are looked for. The snippet, the SDK's referral middleware and its first-party proxy honour every one; an import adds its source's parameter (Rewardful `via`, FirstPromoter `fpr`, PartnerStack `gspk`; Tolt and Tapfiliate use `ref`).",
  );

export const UpdateLinkParamsBody = z.object({
  link_params: z
    .array(LinkParam)
    .min(1, 'at least one parameter is needed (add another before removing the last one)')
    .max(LINK_PARAMS_MAX, `at most ${LINK_PARAMS_MAX} parameters`)
    .refine((names) => new Set(names).size === names.length, 'each parameter may be listed once')
    .describe(
      'The whole list, replacing the current one: 1 to 10 distinct names. `ref` may be removed when another name remains.',
    ),
});

const LinkParamsEnvelope = z.object({ success: z.literal(true), data: z.object({ link_params: LinkParams }) });

export const linkParamsContract = c.router({
  get: {
    method: 'GET',
    path: '/api/link-params',
    summary: 'Get the link parameters',
    description:
      'The query parameters that attribute a visit to a partner (default `["ref"]`); also on GET /api/me as `organization.link_params`.',
    responses: { 200: LinkParamsEnvelope },
  },
  update: {
    method: 'PUT',
    path: '/api/link-params',
    summary: 'Set the link parameters',
    description:
      'Replaces the list of query parameters that attribute a visit to a partner. The snippet and the SDK learn it within five minutes (their cached copy of GET /public/organizations/{organizationId}/link-params). The same list serves live and test mode.',
    body: UpdateLinkParamsBody,
    responses: { 200: LinkParamsEnvelope, ...jsonBodyErrorResponses },
  },
});

export type UpdateLinkParamsBody = z.infer<typeof UpdateLinkParamsBody>;
