import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { OWNER_ONLY } from '../common/access.js';
import { ErrorBody, errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { Livemode, Timestamp } from '../common/primitives.js';

const c = initContract();

export const WEBHOOK_PROVIDERS = ['stripe', 'paddle', 'lemonsqueezy', 'polar', 'chargebee'] as const;

export const WebhookProvider = z
  .enum(WEBHOOK_PROVIDERS)
  .describe('Payment provider: `stripe`, `paddle` (Paddle Billing), `lemonsqueezy`, `polar` or `chargebee`.');

export const Integration = z
  .object({
    provider: WebhookProvider,
    configured: z.boolean().describe('True when a signing secret is stored for this provider; webhooks of an unconfigured provider answer 400.'),
    webhook_path: z
      .string()
      .describe('Path to register in the provider\'s dashboard, under the service\'s base URL: `/webhooks/{provider}/{organization id}`.'),
    updated_at: Timestamp.nullable().describe('When the secret was last stored; null when not configured.'),
    livemode: Livemode,
  })
  .describe('Payment-provider integration (the signing secret itself is never returned)');

export const PutIntegrationBody = z.object({
  signing_secret: z
    .string()
    .min(8)
    .max(1024)
    .describe(
      'The secret the provider uses for this webhook endpoint, exactly as the provider shows it: Stripe the endpoint\'s signing secret (`whsec_…`); Paddle the notification destination\'s secret key (`pdl_ntfset_…`); Lemon Squeezy the webhook\'s signing secret; Polar the webhook secret (`polar_whs_…`); Chargebee the basic-auth password set on the webhook. Write-only: never returned.',
    ),
});

const ProviderParam = z.object({
  provider: z.string().describe('Provider id: `stripe`, `paddle`, `lemonsqueezy`, `polar` or `chargebee`. Any other: 404.'),
});

const IntegrationEnvelope = z.object({ success: z.literal(true), data: z.object({ integration: Integration }) });

export const ReceivedWebhookOutcome = z
  .enum(['processed', 'ignored', 'rejected'])
  .describe(
    '`processed`: the event changed something; `ignored`: verified, but nothing in it to record (the reason is in `detail`); `rejected`: refused with a 400 before it was verified (no signing secret stored, a missing or wrong signature, a timestamp outside the tolerance, a malformed body): nothing of its body is kept, only the reason.',
  );

export const ReceivedWebhookEvent = z
  .object({
    provider: WebhookProvider,
    outcome: ReceivedWebhookOutcome,
    event_id: z.string().nullable().describe("The provider's event id; null when `rejected` (an unverified body is not read)."),
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
  .describe("A provider webhook received: a verified event and its outcome, or the requests rejected for one reason.");

/** Owner-only routes (common/access.ts): the providers' signing secrets and what their webhooks did. */
export const integrationsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/api/integrations',
      summary: 'List payment-provider integrations',
      description: 'Lists every supported provider with whether a signing secret is configured for it. Secrets are never returned.',
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ integrations: z.array(Integration) }) }),
      },
    },
    listEvents: {
      method: 'GET',
      path: '/api/integrations/events',
      summary: 'List provider webhooks received',
      description:
        "The provider webhooks this organization's URLs received, newest first, with their outcome: `processed`, `ignored` (and why), or `rejected` (and why: a wrong signing secret shows here). Cursor pagination; filter by provider and outcome. Redeliveries answered `duplicate` are not listed again.",
      query: PageQuery.extend({
        provider: WebhookProvider.optional().describe('Only this provider\'s webhooks.'),
        outcome: ReceivedWebhookOutcome.optional().describe('Only webhooks with this outcome.'),
      }),
      responses: {
        200: z.object({ success: z.literal(true), data: z.object({ webhook_events: z.array(ReceivedWebhookEvent), next_cursor: NextCursor }) }),
        400: errorResponses[400],
      },
    },
    put: {
      method: 'PUT',
      path: '/api/integrations/:provider',
      summary: "Store a provider's webhook signing secret",
      description:
        "Stores (or replaces, when the provider rotates it) the secret the service verifies this provider's webhooks with. Idempotent. The secret is write-only. Unknown provider: 404.",
      pathParams: ProviderParam,
      body: PutIntegrationBody,
      responses: { 200: IntegrationEnvelope, ...jsonBodyErrorResponses, 404: errorResponses[404] },
    },
    delete: {
      method: 'DELETE',
      path: '/api/integrations/:provider',
      summary: "Remove a provider's signing secret",
      description: "Forgets the secret: from now on this provider's webhooks answer 400. Idempotent. Unknown provider: 404.",
      pathParams: ProviderParam,
      body: c.noBody(),
      responses: { 200: IntegrationEnvelope, 404: errorResponses[404] },
    },
  },
  OWNER_ONLY,
);

export const WebhookOutcome = z
  .enum(['processed', 'ignored', 'duplicate'])
  .describe(
    '`processed`: the event changed something (conversion, customer status, refund); `ignored`: an event type the service does not use, one that concerns no referred customer, one whose data breaks the API’s input rules, or one the API would refuse with a 4xx (nothing recorded; the reason is in `detail`; answered 200 so that the provider stops retrying a payload that can never succeed); `duplicate`: this event was handled before (nothing changed).',
  );

export const WebhookReceipt = z
  .object({
    provider: WebhookProvider,
    event_id: z.string().describe("The provider's event id (Polar: the `webhook-id` header; Lemon Squeezy, which has none: a digest of the body)."),
    event_type: z.string().describe("The provider's event type, e.g. `invoice.paid`."),
    outcome: WebhookOutcome,
    detail: z.string().nullable().describe('Why an event was ignored, or what it did.'),
  })
  .describe('Webhook receipt');

/**
 * Inbound provider webhooks. Documented here so that they appear in the OpenAPI document; the
 * server does not implement them through ts-rest, because verification needs the raw body bytes.
 */
export const webhooksContract = c.router({
  receive: {
    method: 'POST',
    path: '/webhooks/:provider/:organizationId',
    summary: 'Receive a payment-provider webhook',
    description: [
      'Called by the payment provider, not by merchants: no API key. The body is verified on its raw bytes with the organization\'s signing secret for that provider (PUT /api/integrations/{provider}) as the provider documents it:',
      'Stripe `Stripe-Signature` (HMAC-SHA256, 300 s tolerance); Paddle Billing `Paddle-Signature` (`ts`, `h1`, 300 s tolerance); Lemon Squeezy `X-Signature` (HMAC-SHA256 hex of the body); Polar Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`, 300 s tolerance); Chargebee HTTP basic auth whose password is the secret.',
      'The referral is read from the metadata key `ref_svc_affiliate` (a cookie id, slug or click id). A first payment with a referral creates the customer and an `initial` conversion; a renewal becomes a `recurring` conversion by customer; a cancelled subscription makes the customer `canceled`; a refund reverses the commission. The provider\'s payment or invoice id is the conversion\'s `external_id`, so redelivery changes nothing.',
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
export type WebhookReceipt = z.infer<typeof WebhookReceipt>;
export type WebhookOutcome = z.infer<typeof WebhookOutcome>;
export type ReceivedWebhookEvent = z.infer<typeof ReceivedWebhookEvent>;
export type ReceivedWebhookOutcome = z.infer<typeof ReceivedWebhookOutcome>;
