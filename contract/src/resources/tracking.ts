import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ErrorBody, errorResponses } from '../common/errors.js';
import { Deduped, Identifier, Livemode, Mode, Uuid } from '../common/primitives.js';
import { LinkParams } from './link-params.js';

/** The public endpoints' mode: `test` records the click or customer in the organization's test data (the snippet's `data-mode="test"`). */
const TrackingMode = Mode.optional().describe(
  '`test`: record it in test data (what the snippet sends with `data-mode="test"`), seen only with test keys; default `live`.',
);

const c = initContract();

/**
 * The public endpoints the tracking snippet calls from the merchant's pages. They take no API key
 * (the organization id in the path is public), answer any origin (CORS), are rate limited per
 * client address, and return only what the snippet needs: never a record of another organization,
 * nor the stored fields of this organization's records.
 *
 * Request bodies use the snippet's wire names as the specification writes them (`customerId`,
 * `cookieId`); responses follow the service's snake_case envelope.
 */

const TRACKING_NOTE =
  ' Public: no API key; callable from any origin (CORS, preflight answered). The body may be sent as `application/json` or as `text/plain` holding JSON, which browsers send without a CORS preflight. Rate limited per client address (429 with Retry-After).';

/**
 * The request content types the public endpoints accept (server/src/modules/tracking/
 * tracking.http.ts parses both as JSON): `text/plain` is what the snippet sends, a CORS "simple"
 * request with no preflight. ts-rest's `contentType` names one type and not this one, so the
 * route's metadata carries the list; the OpenAPI document declares each (openapi/document.ts).
 */
export const TRACKING_REQUEST_CONTENT_TYPES = ['application/json', 'text/plain'] as const;
const trackingMetadata = { requestContentTypes: TRACKING_REQUEST_CONTENT_TYPES } as const;

/**
 * What a first-party proxy (the SDK's `createFirstPartyProxy`, in the merchant's own app) adds:
 * the organization's API key and the visitor's address. Without a valid key of the organization
 * in the path the address is ignored (server/src/modules/tracking/forwarded-visitor.ts).
 */
export const TrackingProxyHeaders = z.object({
  'x-visitor-ip': z
    .string()
    .optional()
    .describe(
      "The visitor's IP address, sent by a first-party proxy that forwards the browser's calls from the merchant's own domain. Used (for the click's `ip` and the per-address rate limit) only when `Authorization` holds a valid API key of this organization; otherwise ignored, so a browser or anyone else sending it changes nothing.",
    ),
  authorization: z
    .string()
    .optional()
    .describe(
      'Only from a first-party proxy: `Bearer svc-…`, an API key of this organization, which makes `X-Visitor-IP` trusted. An invalid key or one of another organization is not an error: the header is then ignored. Never send it from a browser.',
    ),
});

export const TrackingPathParams = z.object({
  organizationId: Uuid.describe(
    'Your organization id (public; it is what `data-organization` on the snippet tag holds).',
  ),
});

export const TrackingClickBody = z.object({
  ref: Identifier.describe(
    "The affiliate slug from the landing URL (`?ref=<slug>`, or any of the organization's link parameters).",
  ),
  landingUrl: z
    .string()
    .max(2048)
    .optional()
    .describe('The page the visitor landed on (`location.href`, at most 2048 characters).'),
  referrer: z.string().max(2048).optional().describe('`document.referrer` of the visit, at most 2048 characters.'),
  cookieId: z
    .string()
    .max(255)
    .optional()
    .describe(
      "The current `svc_aff` cookie's value, if any: kept under the program's `first_click` model when it is a valid click of this organization, and answered as the same visit (no new click) when it is a click of the same affiliate made within 30 minutes.",
    ),
  mode: TrackingMode,
});

export const TrackingClick = z
  .object({
    cookie_id: z
      .string()
      .describe(
        'The tracking id (`ck_…`) to store in the first-party `svc_aff` cookie; the merchant backend passes it on as `cookie_id`.',
      ),
    cookie_max_age_seconds: z
      .number()
      .int()
      .describe("The cookie's lifetime: the program's click window in seconds (0: a session cookie)."),
    kept: z
      .boolean()
      .describe(
        'true: `cookie_id` is the one the visitor already has (the `first_click` model, a click flood, or the same visit captured again, e.g. by the server middleware first): the snippet leaves the cookie as it is.',
      ),
    livemode: Livemode,
  })
  .describe('Tracked click (public view)');

export const TrackingCustomerBody = z.object({
  customerId: Identifier.describe(
    "The merchant's (payment provider's) customer id, as `customer_id` in POST /api/customers.",
  ),
  cookieId: Identifier.describe(
    'The value of the `svc_aff` cookie: a `ck_…` tracking id, or the raw slug the snippet stores when the service was slow.',
  ),
  mode: TrackingMode,
});

export const TrackingCustomer = z
  .object({
    customer_id: z
      .string()
      .describe(
        "The merchant's customer id, echoed back. Nothing else of the stored customer is returned by this public endpoint.",
      ),
    livemode: Livemode,
  })
  .describe('Tracked customer (public view)');

const publicErrors = {
  400: errorResponses[400],
  413: ErrorBody.describe('Request body too large (the public endpoints accept at most 16 KiB).'),
  415: ErrorBody.describe('Content-Type is neither application/json nor text/plain.'),
  429: ErrorBody.describe(
    "Too many requests from this client address; retry after the `Retry-After` header's seconds.",
  ),
} as const;

export const trackingContract = c.router({
  linkParams: {
    method: 'GET',
    path: '/public/organizations/:organizationId/link-params',
    summary: 'The link parameters the snippet looks for',
    description:
      'What the snippet reads when a page\'s URL has a query string: the organization\'s link parameters (GET /api/link-params), so that `?via=ada` attributes once an import added `via`, with no change to the snippet tag. Cacheable for five minutes (`Cache-Control: public, max-age=300`). An unknown organization answers the default `["ref"]`, so the answer never tells whether an organization exists. Public: no API key; callable from any origin (CORS).',
    pathParams: TrackingPathParams,
    responses: {
      200: z.object({ success: z.literal(true), data: z.object({ link_params: LinkParams }) }),
      400: errorResponses[400],
      413: publicErrors[413],
      429: publicErrors[429],
    },
  },
  createClick: {
    method: 'POST',
    path: '/public/organizations/:organizationId/clicks',
    summary: 'Register a click from the tracking snippet',
    description:
      "Called by the snippet when a visitor lands with `?ref=<slug>`: records the click exactly as POST /api/clicks does (client address and user agent taken from the request; the address from `X-Visitor-IP` when a first-party proxy sends it with this organization's key) and returns the tracking id to store in the `svc_aff` cookie with its lifetime. Under the program's `last_click` model (default) every new visit with a `ref` records a new click and replaces the cookie; under `first_click` a valid cookie of this organization sent as `cookieId` is kept (`kept: true`). A `cookieId` that is a click of the same affiliate made within 30 minutes is the same visit captured again (the merchant's server middleware on the same page, a reload): that click is answered with `kept: true` and nothing new is recorded. Requests from bots and crawlers (recognised by their user agent) are answered 200 with `click: null` and record nothing. An unknown `ref` and an unknown organization both answer 404 \"No attribution found\", so the answer never tells whether an organization exists." +
      TRACKING_NOTE,
    pathParams: TrackingPathParams,
    headers: TrackingProxyHeaders,
    body: TrackingClickBody,
    metadata: trackingMetadata,
    responses: {
      201: z.object({ success: z.literal(true), data: z.object({ click: TrackingClick }) }),
      200: z
        .object({
          success: z.literal(true),
          data: z.object({ click: z.null().describe('Null: the user agent is a bot; nothing was recorded.') }),
        })
        .describe('Bot user agent: accepted, not recorded.'),
      ...publicErrors,
      404: errorResponses[404],
    },
  },
  createCustomer: {
    method: 'POST',
    path: '/public/organizations/:organizationId/customers',
    summary: 'Track a trial customer from the tracking snippet',
    description:
      "Called by `svc('trial', customerId)` / `svc('customer', customerId)` with the `svc_aff` cookie's value: creates the same `trial` customer as POST /api/customers with `{ customer_id, cookie_id, status: 'trial' }`, tied to the affiliate and program of that click (or slug). Idempotent on `customerId`: a repeat answers 200 with `deduped: true` and leaves the existing customer, its status and its attribution unchanged. 404 \"No attribution found\" when the cookie value was not issued by this organization (or the organization does not exist); 410 when the click is older than the program's click window." +
      TRACKING_NOTE,
    pathParams: TrackingPathParams,
    headers: TrackingProxyHeaders,
    body: TrackingCustomerBody,
    metadata: trackingMetadata,
    responses: {
      200: z.object({ success: z.literal(true), data: z.object({ customer: TrackingCustomer }), deduped: Deduped }),
      201: z.object({ success: z.literal(true), data: z.object({ customer: TrackingCustomer }), deduped: Deduped }),
      ...publicErrors,
      404: errorResponses[404],
      410: errorResponses[410],
    },
  },
});

export type TrackingClick = z.infer<typeof TrackingClick>;
export type TrackingClickBody = z.infer<typeof TrackingClickBody>;
export type TrackingCustomerBody = z.infer<typeof TrackingCustomerBody>;
