import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { INTEGRATIONS_ACCESS, restricted } from '../common/access.js';
import { ErrorBody, errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { Livemode, Timestamp } from '../common/primitives.js';

const c = initContract();

export const WEBHOOK_PROVIDERS = ['stripe', 'paddle', 'lemonsqueezy', 'polar', 'chargebee'] as const;

export const WebhookProvider = z
  .enum(WEBHOOK_PROVIDERS)
  .describe('Payment provider: `stripe`, `paddle` (Paddle Billing), `lemonsqueezy`, `polar` or `chargebee`.');

/** Payout rails: where payouts are sent from the merchant's own account (shared/spec/payout-rails.md). */
export const PAYOUT_RAILS = ['paypal_payouts', 'stripe_connect', 'wise'] as const;

export const PayoutRail = z
  .enum(PAYOUT_RAILS)
  .describe(
    'Payout rail: `paypal_payouts` (PayPal Payouts), `stripe_connect` (Stripe Connect transfers) or `wise` (Wise transfers).',
  );

export const INTEGRATION_PROVIDERS = [...WEBHOOK_PROVIDERS, ...PAYOUT_RAILS] as const;

/** Whose webhooks the log of received webhooks lists: the payment providers', and the payout rails' with a webhook of their own (Stripe Connect's transfer events arrive by the `stripe` webhook). */
export const LOGGED_WEBHOOK_PROVIDERS = [...WEBHOOK_PROVIDERS, 'paypal_payouts', 'wise'] as const;

export const LoggedWebhookProvider = z
  .enum(LOGGED_WEBHOOK_PROVIDERS)
  .describe(
    'Whose webhook: a payment provider (`stripe`, `paddle`, `lemonsqueezy`, `polar`, `chargebee`; Stripe Connect transfer events arrive by `stripe`) or a payout rail (`paypal_payouts`: POST /webhooks/paypal/{organization id}; `wise`: POST /webhooks/wise/{organization id}).',
  );

export const IntegrationProvider = z
  .enum(INTEGRATION_PROVIDERS)
  .describe(
    'A payment provider (`stripe`, `paddle`, `lemonsqueezy`, `polar`, `chargebee`: its webhook signing secret) or a payout rail (`paypal_payouts`, `stripe_connect`, `wise`: the credentials payouts are sent with).',
  );

export const RailEnvironment = z
  .enum(['sandbox', 'live'])
  .describe("`sandbox`: the provider's test environment; `live`: real money.");

export const Integration = z
  .object({
    provider: IntegrationProvider,
    kind: z
      .enum(['payment_provider', 'payout_rail'])
      .describe(
        '`payment_provider`: its webhooks record sales; `payout_rail`: payouts are sent through it (POST /api/payouts/send).',
      ),
    configured: z
      .boolean()
      .describe(
        'True when a signing secret (payment provider) or credentials (payout rail) are stored; webhooks of an unconfigured provider answer 400, and payouts by an unconfigured rail are refused.',
      ),
    environment: RailEnvironment.optional().describe(
      "A configured payout rail's environment (Stripe: from the key, `sk_test_`/`rk_test_` is `sandbox`); absent for payment providers and unconfigured rails.",
    ),
    webhook_path: z
      .string()
      .describe(
        "Path to register in the provider's dashboard, under the service's base URL: `/webhooks/{provider}/{organization id}`, the same in live and test mode (the live organization's id, GET /api/me). Register it in the provider's sandbox or test site too: each event lands in live or test data by the provider's own test flag, or by which mode's signing secret verifies it.",
      ),
    updated_at: Timestamp.nullable().describe('When the secret was last stored; null when not configured.'),
    livemode: Livemode,
  })
  .describe('Payment-provider integration (the signing secret itself is never returned)');

const Credential = z.string().min(1).max(4096);

/**
 * One body for every provider; which fields are required depends on the provider (checked by the
 * service, naming the field): a payment provider takes `signing_secret`; `paypal_payouts` takes
 * `client_id`, `client_secret`, `environment` and optionally `webhook_id`; `stripe_connect` takes
 * `secret_key`; `wise` takes `api_token`, `profile_id` and `environment`.
 */
export const PutIntegrationBody = z.object({
  client_id: Credential.optional().describe("`paypal_payouts`: the REST app's client id."),
  client_secret: Credential.optional().describe("`paypal_payouts`: the REST app's secret. Write-only."),
  environment: RailEnvironment.optional().describe(
    "`paypal_payouts` and `wise`: which environment the credentials belong to (default host of the provider's API for it; PAYPAL_API_BASE_URL / WISE_API_BASE_URL override).",
  ),
  webhook_id: Credential.optional().describe(
    "`paypal_payouts`: the id of the webhook registered for `/webhooks/paypal/{organization id}`, which PayPal's verify-webhook-signature needs. Without it, PayPal webhooks answer 400 and outcomes come from the periodic reconciliation only.",
  ),
  secret_key: Credential.optional().describe(
    "`stripe_connect`: the platform account's secret key (`sk_…`) or restricted key (`rk_…`) with Transfers write. Write-only.",
  ),
  api_token: Credential.optional().describe('`wise`: a personal or business API token. Write-only.'),
  profile_id: z
    .union([z.string().min(1).max(64), z.number().int()])
    .optional()
    .describe('`wise`: the business profile id transfers are sent from.'),
  signing_secret: z
    .string()
    .min(8)
    .max(1024)
    .optional()
    .describe(
      "The secret the provider uses for this webhook endpoint, exactly as the provider shows it: Stripe the endpoint's signing secret (`whsec_…`); Paddle the notification destination's secret key (`pdl_ntfset_…`); Lemon Squeezy the webhook's signing secret; Polar the webhook secret (`polar_whs_…`); Chargebee the basic-auth password set on the webhook. Write-only: never returned.",
    ),
});

const ProviderParam = z.object({
  provider: z
    .string()
    .describe(
      'Provider id: `stripe`, `paddle`, `lemonsqueezy`, `polar`, `chargebee`, `paypal_payouts`, `stripe_connect` or `wise`. Any other: 404.',
    ),
});

const IntegrationEnvelope = z.object({ success: z.literal(true), data: z.object({ integration: Integration }) });

export const ReceivedWebhookOutcome = z
  .enum(['processed', 'ignored', 'rejected'])
  .describe(
    '`processed`: the event changed something; `ignored`: verified, but nothing in it to record (the reason is in `detail`); `rejected`: refused with a 400 before it was verified (no signing secret stored, a missing or wrong signature, a timestamp outside the tolerance, a malformed body): nothing of its body is kept, only the reason.',
  );

export const ReceivedWebhookEvent = z
  .object({
    provider: LoggedWebhookProvider,
    outcome: ReceivedWebhookOutcome,
    event_id: z
      .string()
      .nullable()
      .describe("The provider's event id; null when `rejected` (an unverified body is not read)."),
    event_type: z.string().nullable().describe("The provider's event type, e.g. `invoice.paid`; null when `rejected`."),
    detail: z.string().nullable().describe('What the event did, why it was ignored, or why it was rejected.'),
    requests: z
      .number()
      .int()
      .describe(
        'How many requests this entry stands for: 1 for a verified event (its redeliveries are answered `duplicate` and not listed again); for `rejected`, every request refused for the same reason since `first_received_at`, counted rather than kept one by one so that anyone posting to the public webhook URL cannot fill the database.',
      ),
    first_received_at: Timestamp.describe('When the first of these requests arrived.'),
    received_at: Timestamp.describe('When the last of these requests arrived: the order of the list, newest first.'),
    livemode: Livemode,
  })
  .describe('A provider webhook received: a verified event and its outcome, or the requests rejected for one reason.');

/** Owner-only routes (common/access.ts): the providers' signing secrets and what their webhooks did. */
export const integrationsContract = c.router(
  restricted(INTEGRATIONS_ACCESS, {
    list: {
      method: 'GET',
      path: '/api/integrations',
      summary: 'List integrations',
      description:
        'Lists every supported payment provider and payout rail with whether it is configured. Secrets and credentials are never returned.',
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ integrations: z.array(Integration) }) }),
      },
    },
    listEvents: {
      method: 'GET',
      path: '/api/integrations/events',
      summary: 'List provider webhooks received',
      description:
        "The webhooks this organization's URLs received (the payment providers', and the PayPal and Wise payout webhooks), newest first, with their outcome: `processed`, `ignored` (and why), or `rejected` (and why: a wrong signing secret shows here). Cursor pagination; filter by provider and outcome. Redeliveries answered `duplicate` are not listed again.",
      query: PageQuery.extend({
        provider: LoggedWebhookProvider.optional().describe("Only this provider's webhooks."),
        outcome: ReceivedWebhookOutcome.optional().describe('Only webhooks with this outcome.'),
      }),
      responses: {
        200: z.object({
          success: z.literal(true),
          data: z.object({ webhook_events: z.array(ReceivedWebhookEvent), next_cursor: NextCursor }),
        }),
        400: errorResponses[400],
      },
    },
    put: {
      method: 'PUT',
      path: '/api/integrations/:provider',
      summary: "Store a provider's signing secret or a payout rail's credentials",
      description:
        "A payment provider: stores (or replaces, when the provider rotates it) the secret the service verifies this provider's webhooks with. A payout rail (`paypal_payouts` `{ client_id, client_secret, environment, webhook_id? }`, `stripe_connect` `{ secret_key }`, `wise` `{ api_token, profile_id, environment }`): stores the credentials payouts are sent with, encrypted at rest like the secrets. PayPal's are tried first with a token call (POST /v1/oauth2/token at PayPal): credentials PayPal refuses answer 400 with PayPal's reason, and PayPal not answering answers 502; in both cases nothing is saved. Idempotent; write-only. A missing field: 400 naming it. Unknown provider: 404.",
      pathParams: ProviderParam,
      body: PutIntegrationBody,
      responses: {
        200: IntegrationEnvelope,
        ...jsonBodyErrorResponses,
        404: errorResponses[404],
        502: ErrorBody.describe('PayPal could not be reached to check the credentials: nothing was saved; try again.'),
      },
    },
    delete: {
      method: 'DELETE',
      path: '/api/integrations/:provider',
      summary: "Remove a provider's signing secret or a rail's credentials",
      description:
        "Forgets the secret or credentials: from now on this provider's webhooks answer 400 and payouts by this rail are refused. Idempotent. Unknown provider: 404.",
      pathParams: ProviderParam,
      body: c.noBody(),
      responses: { 200: IntegrationEnvelope, 404: errorResponses[404] },
    },
  }),
);

export const WebhookOutcome = z
  .enum(['processed', 'ignored', 'duplicate'])
  .describe(
    '`processed`: the event changed something (conversion, customer status, refund); `ignored`: an event type the service does not use, one that concerns no referred customer, one whose data breaks the API’s input rules, or one the API would refuse with a 4xx (nothing recorded; the reason is in `detail`; answered 200 so that the provider stops retrying a payload that can never succeed); `duplicate`: this event was handled before (nothing changed).',
  );

export const WebhookReceipt = z
  .object({
    provider: WebhookProvider,
    event_id: z
      .string()
      .describe(
        "The provider's event id (Polar: the `webhook-id` header; Lemon Squeezy, which has none: a digest of the body).",
      ),
    event_type: z.string().describe("The provider's event type, e.g. `invoice.paid`."),
    outcome: WebhookOutcome,
    detail: z.string().nullable().describe('Why an event was ignored, or what it did.'),
  })
  .describe('Webhook receipt');

/**
 * Inbound provider webhooks. Documented here so that they appear in the OpenAPI document; the
 * server does not implement them through ts-rest, because verification needs the raw body bytes.
 */
export const RailWebhookReceipt = z
  .object({
    provider: PayoutRail,
    event_id: z.string().nullable().describe("The provider's event id (Wise: the X-Delivery-Id header)."),
    event_type: z
      .string()
      .nullable()
      .describe('The event type, e.g. `PAYMENT.PAYOUTS-ITEM.SUCCEEDED`, `transfers#state-change`.'),
    outcome: z
      .enum(['processed', 'ignored', 'duplicate'])
      .describe(
        '`processed`: a payout in flight was settled (paid or failed); `ignored`: verified, nothing to change (the reason in `detail`); `duplicate`: this event (by its id) was handled before, nothing changed. Each handled event is listed in GET /api/integrations/events; a request refused with 400 (or, for PayPal, 429) is counted there as `rejected`.',
      ),
    detail: z.string().describe('What the event did, or why it changed nothing.'),
  })
  .describe("A payout rail's webhook receipt");

const RailWebhookResponses = {
  200: z.object({ success: z.literal(true), data: z.object({ webhook: RailWebhookReceipt }) }),
  400: errorResponses[400],
  413: ErrorBody.describe('Body over the 1 MiB limit.'),
};

const PayPalWebhookResponses = {
  ...RailWebhookResponses,
  400: ErrorBody.describe(
    "Refused before anything in it is read, the reason in the message and counted in GET /api/integrations/events: no integration or no `webhook_id`; a PAYPAL-* header missing or not in the shape PayPal documents; PAYPAL-CERT-URL not https on PayPal's certificate hosts of the integration's environment (sandbox: api.sandbox.paypal.com, api-m.sandbox.paypal.com; live: api.paypal.com, api-m.paypal.com; path /v1/notifications/certs/); PAYPAL-TRANSMISSION-TIME more than 300 s from now; a body that is not a JSON object with `id` and `event_type`. These make no call to PayPal. Otherwise: PayPal did not verify the signature.",
  ),
  429: ErrorBody.describe(
    'More PayPal verifications for this organization than the service makes per window (120 per 60 s, across instances): refused without asking PayPal, counted in GET /api/integrations/events; PayPal delivers the event again later. Retry after `Retry-After` seconds.',
  ),
};

export const webhooksContract = c.router({
  receivePayPalPayouts: {
    method: 'POST',
    path: '/webhooks/paypal/:organizationId',
    summary: 'Receive a PayPal Payouts webhook',
    description:
      "Called by PayPal: register this URL as a webhook of the REST app whose credentials the `paypal_payouts` integration holds, for the `PAYMENT.PAYOUTS-ITEM.*` events, and store its webhook id in the integration (`webhook_id`). Each event is verified by PayPal itself (POST /v1/notifications/verify-webhook-signature with the PAYPAL-TRANSMISSION-ID, -TIME, -SIG, PAYPAL-CERT-URL and PAYPAL-AUTH-ALGO headers): one PayPal does not verify answers 400 and changes nothing. A request that cannot be PayPal's (see 400) is refused before PayPal is called; the calls to PayPal are bounded per organization (429), and one access token per organization serves them until it expires. Item events (`PAYMENT.PAYOUTS-ITEM.*`): SUCCEEDED pays the payout; FAILED, RETURNED, BLOCKED, REFUNDED, REVERSED fail it; UNCLAIMED and the others leave it `processing`. Batch events (`PAYMENT.PAYOUTSBATCH.*`): the batch is read back from PayPal (a DENIED batch fails its payouts).",
    pathParams: z.object({ organizationId: z.string().describe('Id of the organization the payouts belong to.') }),
    headers: z.object({
      'paypal-transmission-id': z
        .string()
        .optional()
        .describe("PayPal's id of this transmission (up to 50 characters)."),
      'paypal-transmission-time': z
        .string()
        .optional()
        .describe('When PayPal sent it (RFC 3339); more than 300 s from now is refused.'),
      'paypal-transmission-sig': z.string().optional().describe('Base64 signature (up to 500 characters).'),
      'paypal-cert-url': z
        .string()
        .optional()
        .describe(
          "URL of PayPal's signing certificate, on PayPal's certificate hosts of the integration's environment.",
        ),
      'paypal-auth-algo': z.string().optional().describe('The signature algorithm, e.g. `SHA256withRSA`.'),
    }),
    body: z.record(z.unknown()).describe("PayPal's event, exactly as PayPal sends it."),
    responses: PayPalWebhookResponses,
  },
  receiveWise: {
    method: 'POST',
    path: '/webhooks/wise/:organizationId',
    summary: 'Receive a Wise transfer webhook',
    description:
      "Called by Wise: subscribe this URL to `transfers#state-change` for the profile of the `wise` integration. Verified with Wise's RSA public key (X-Signature-SHA256 over the raw body; WISE_WEBHOOK_PUBLIC_KEY): a wrong or missing signature answers 400. `outgoing_payment_sent` pays the payout; `bounced_back`, `funds_refunded`, `cancelled`, `charged_back` fail it.",
    pathParams: z.object({ organizationId: z.string().describe('Id of the organization the payouts belong to.') }),
    headers: z.object({
      'x-signature-sha256': z.string().optional().describe('Base64 SHA256withRSA signature of the body.'),
    }),
    body: z.record(z.unknown()).describe("Wise's event, exactly as Wise sends it."),
    responses: RailWebhookResponses,
  },
  receive: {
    method: 'POST',
    path: '/webhooks/:provider/:organizationId',
    summary: 'Receive a payment-provider webhook',
    description: [
      "Called by the payment provider, not by merchants: no API key. The body is verified on its raw bytes with the organization's signing secret for that provider (PUT /api/integrations/{provider}) as the provider documents it:",
      'Stripe `Stripe-Signature` (HMAC-SHA256, 300 s tolerance); Paddle Billing `Paddle-Signature` (`ts`, `h1`, 300 s tolerance); Lemon Squeezy `X-Signature` (HMAC-SHA256 hex of the body); Polar Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`, 300 s tolerance); Chargebee HTTP basic auth whose password is the secret.',
      "The referral is read from the metadata key `ref_svc_affiliate` (a cookie id, slug or click id). A first payment with a referral creates the customer and an `initial` conversion; a renewal becomes a `recurring` conversion by customer; a cancelled subscription makes the customer `canceled`; a refund reverses the commission. The provider's payment or invoice id is the conversion's `external_id`, so redelivery changes nothing.",
      'Unknown provider: 404. No secret configured for the provider, or a missing or wrong signature, or a signature timestamp more than 300 s old or more than 300 s ahead: 400, nothing recorded. Event types the service does not use: 200 with outcome `ignored`.',
    ].join(' '),
    pathParams: z.object({
      provider: z.string().describe('`stripe`, `paddle`, `lemonsqueezy`, `polar` or `chargebee`.'),
      organizationId: z.string().describe('Id of the organization the events belong to.'),
    }),
    headers: z.object({
      'stripe-signature': z.string().optional().describe('Stripe: `t=<unix>,v1=<hex>[,v1=<hex>]`.'),
      'paddle-signature': z.string().optional().describe('Paddle Billing: `ts=<unix>;h1=<hex>[;h1=<hex>]`.'),
      'x-signature': z.string().optional().describe('Lemon Squeezy: hex HMAC-SHA256 of the body.'),
      'webhook-id': z.string().optional().describe('Polar (Standard Webhooks): message id.'),
      'webhook-timestamp': z.string().optional().describe('Polar (Standard Webhooks): unix seconds.'),
      'webhook-signature': z.string().optional().describe('Polar (Standard Webhooks): `v1,<base64>` list.'),
      authorization: z.string().optional().describe('Chargebee: `Basic base64(<username>:<secret>)`.'),
    }),
    body: z.record(z.unknown()).describe("The provider's event, exactly as the provider sends it."),
    responses: {
      200: z.object({ success: z.literal(true), data: z.object({ webhook: WebhookReceipt }) }),
      400: errorResponses[400],
      404: errorResponses[404],
      413: ErrorBody.describe('Body over the 1 MiB limit.'),
    },
  },
});

export type Integration = z.infer<typeof Integration>;
export type WebhookProvider = z.infer<typeof WebhookProvider>;
export type LoggedWebhookProvider = z.infer<typeof LoggedWebhookProvider>;
export type PayoutRail = z.infer<typeof PayoutRail>;
export type IntegrationProvider = z.infer<typeof IntegrationProvider>;
export type PutIntegrationBody = z.infer<typeof PutIntegrationBody>;
export type WebhookReceipt = z.infer<typeof WebhookReceipt>;
export type WebhookOutcome = z.infer<typeof WebhookOutcome>;
export type ReceivedWebhookEvent = z.infer<typeof ReceivedWebhookEvent>;
export type ReceivedWebhookOutcome = z.infer<typeof ReceivedWebhookOutcome>;
export type RailWebhookReceipt = z.infer<typeof RailWebhookReceipt>;
