import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { Livemode, Timestamp, Uuid } from '../common/primitives.js';

const c = initContract();

/** Every event the service sends (shared/spec/ledger.md, "Outbound events"). */
export const OUTBOUND_EVENT_TYPES = [
  'affiliate.created',
  'affiliate.updated',
  'customer.created',
  'customer.updated',
  'conversion.created',
  'conversion.refunded',
  'commission.created',
  'commission.updated',
  'payout.created',
  'payout.paid',
  'payout.canceled',
  'payout.failed',
] as const;

export const OutboundEventType = z
  .enum(OUTBOUND_EVENT_TYPES)
  .describe(
    'An event type: `affiliate.created`, `affiliate.updated`, `customer.created`, `customer.updated`, `conversion.created`, `conversion.refunded`, `commission.created`, `commission.updated`, `payout.created`, `payout.paid`, `payout.canceled`, `payout.failed` (a payout sent through a rail that the provider did not pay: its `failure_reason`; its commissions are `approved` again).',
  );

const EndpointUrl = z
  .string()
  .url()
  .max(2048)
  .describe(
    'Where events are POSTed. Must be `https://` and must not reach a loopback, private, link-local or cloud-metadata address (checked at creation and again at every delivery, since DNS can change); the operator may lift both rules for development (`WEBHOOK_ALLOW_PRIVATE_URLS=true`).',
  );

const EventList = z
  .array(OutboundEventType)
  .min(1)
  .max(OUTBOUND_EVENT_TYPES.length)
  .describe('The event types sent to this endpoint (at least one; repeats are ignored).');

export const WebhookEndpoint = z
  .object({
    id: Uuid.describe('Endpoint id.'),
    url: z.string().describe('Where events are POSTed.'),
    description: z.string().nullable().describe('Your note about the endpoint.'),
    events: z.array(OutboundEventType).describe('The event types sent to it.'),
    enabled: z
      .boolean()
      .describe(
        'False: nothing is sent to it (disabled by you, by a `410 Gone` answer, or after 3 days of failed deliveries).',
      ),
    disabled_reason: z
      .string()
      .nullable()
      .describe(
        'Why the service disabled it (`410 Gone`, or failing for 3 days); null when enabled or disabled by you.',
      ),
    secret_rotated_at: Timestamp.nullable().describe('When the secret was last rotated; null if never.'),
    previous_secret_expires_at: Timestamp.nullable().describe(
      'Until when the previous secret still signs alongside the new one (24 hours after a rotation); null when none does.',
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
    livemode: Livemode,
  })
  .describe(
    'Webhook endpoint: where the service sends signed events (Standard Webhooks). Its secret is shown only when created or rotated.',
  );

export const WebhookDeliveryStatus = z
  .enum(['pending', 'succeeded', 'failed'])
  .describe(
    '`pending`: not yet answered with a 2xx, another attempt is scheduled (`next_attempt_at`); `succeeded`: answered 2xx; `failed`: no attempt left (3 days of retries, or the endpoint was disabled or deleted). `POST /api/webhook-deliveries/{id}/retry` sends it again.',
  );

export const WebhookDelivery = z
  .object({
    id: Uuid.describe('Delivery id: one event to one endpoint.'),
    endpoint_id: Uuid.describe('The endpoint.'),
    event_id: z
      .string()
      .describe(
        'The `webhook-id` header sent with every attempt of this event (`msg_…`): stable across retries, dedupe on it.',
      ),
    event_type: OutboundEventType,
    status: WebhookDeliveryStatus,
    attempts: z.number().int().describe('Attempts made so far.'),
    last_response_status: z
      .number()
      .int()
      .nullable()
      .describe(
        "HTTP status of the last attempt's answer; null when none came (timeout, connection error, address refused).",
      ),
    last_response_body: z.string().nullable().describe("The first 1 KB of the last answer's body."),
    last_error: z.string().nullable().describe('Why the last attempt failed without an HTTP answer, or was not made.'),
    last_attempt_at: Timestamp.nullable().describe('When the last attempt was made.'),
    next_attempt_at: Timestamp.nullable().describe('When the next attempt is due; null when none is scheduled.'),
    created_at: Timestamp,
    livemode: Livemode,
  })
  .describe('Delivery of one event to one endpoint, with the outcome of its attempts.');

export const CreateWebhookEndpointBody = z.object({
  url: EndpointUrl,
  events: EventList,
  description: z.string().max(500).optional().describe('Your note about the endpoint.'),
});

export const UpdateWebhookEndpointBody = z.object({
  url: EndpointUrl.optional(),
  events: EventList.optional(),
  description: z.string().max(500).nullable().optional().describe('Your note; null clears it.'),
  enabled: z
    .boolean()
    .optional()
    .describe('False stops deliveries; true enables it again (and clears `disabled_reason`).'),
});

const Secret = z
  .string()
  .describe(
    'The signing secret, `whsec_` + base64 of 32 random bytes. Shown in this answer only: store it where your receiver can read it.',
  );

const EndpointEnvelope = z.object({ success: z.literal(true), data: z.object({ webhook_endpoint: WebhookEndpoint }) });
const EndpointWithSecretEnvelope = z.object({
  success: z.literal(true),
  data: z.object({ webhook_endpoint: WebhookEndpoint, secret: Secret }),
});
const idParam = z.object({ id: z.string().describe('Endpoint id (UUID).') });

export const webhookEndpointsContract = c.router({
  create: {
    method: 'POST',
    path: '/api/webhook-endpoints',
    summary: 'Create a webhook endpoint',
    description:
      'Registers a URL to receive the given event types, signed with the Standard Webhooks scheme (`webhook-id`, `webhook-timestamp`, `webhook-signature`). Answers its signing secret, once. A URL that is not `https://`, or that resolves to a loopback, private, link-local or metadata address: 400.',
    body: CreateWebhookEndpointBody,
    responses: { 201: EndpointWithSecretEnvelope, ...jsonBodyErrorResponses },
  },
  list: {
    method: 'GET',
    path: '/api/webhook-endpoints',
    summary: 'List webhook endpoints',
    description: 'Lists the endpoints, oldest first, with cursor pagination. Secrets are never listed.',
    query: PageQuery,
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({ webhook_endpoints: z.array(WebhookEndpoint), next_cursor: NextCursor }),
      }),
      400: errorResponses[400],
    },
  },
  get: {
    method: 'GET',
    path: '/api/webhook-endpoints/:id',
    summary: 'Get a webhook endpoint',
    description: 'Returns one endpoint (without its secret).',
    pathParams: idParam,
    responses: { 200: EndpointEnvelope, 403: errorResponses[403], 404: errorResponses[404] },
  },
  update: {
    method: 'PATCH',
    path: '/api/webhook-endpoints/:id',
    summary: 'Update a webhook endpoint',
    description:
      'Changes the URL, the event types, the description, or enables / disables it. Fields left out stay as they are.',
    pathParams: idParam,
    body: UpdateWebhookEndpointBody,
    responses: { 200: EndpointEnvelope, ...jsonBodyErrorResponses, 403: errorResponses[403], 404: errorResponses[404] },
  },
  delete: {
    method: 'DELETE',
    path: '/api/webhook-endpoints/:id',
    summary: 'Delete a webhook endpoint',
    description:
      'Deletes the endpoint with its delivery log: nothing more is sent to it, attempts already scheduled included.',
    pathParams: idParam,
    body: c.noBody(),
    responses: { 200: EndpointEnvelope, 403: errorResponses[403], 404: errorResponses[404] },
  },
  rotateSecret: {
    method: 'POST',
    path: '/api/webhook-endpoints/:id/rotate-secret',
    summary: "Rotate a webhook endpoint's secret",
    description:
      'Issues a new signing secret, answered once. For the next 24 hours every delivery carries two signatures (`v1,<new> v1,<old>`), so a receiver still verifying with the old secret keeps accepting them while you deploy the new one; then the old one is dropped.',
    pathParams: idParam,
    body: z.object({}).default({}),
    responses: {
      200: EndpointWithSecretEnvelope,
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
    },
  },
  listDeliveries: {
    method: 'GET',
    path: '/api/webhook-endpoints/:id/deliveries',
    summary: "List an endpoint's deliveries",
    description:
      'The delivery log of one endpoint, newest first: status, attempts, last answer and next attempt of each event sent to it.',
    pathParams: idParam,
    query: PageQuery.extend({ status: WebhookDeliveryStatus.optional().describe('Only deliveries in this status.') }),
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({ deliveries: z.array(WebhookDelivery), next_cursor: NextCursor }),
      }),
      400: errorResponses[400],
      403: errorResponses[403],
      404: errorResponses[404],
    },
  },
  retryDelivery: {
    method: 'POST',
    path: '/api/webhook-deliveries/:id/retry',
    summary: 'Retry a delivery',
    description:
      'Sends the event again now, with the same `webhook-id`, whatever its status (a succeeded delivery is sent once more). The endpoint must be enabled (else 409).',
    pathParams: z.object({ id: z.string().describe('Delivery id (UUID).') }),
    body: z.object({}).default({}),
    responses: {
      202: z.object({ success: z.literal(true), data: z.object({ delivery: WebhookDelivery }) }),
      ...jsonBodyErrorResponses,
      403: errorResponses[403],
      404: errorResponses[404],
      409: errorResponses[409],
    },
  },
});

export type OutboundEventType = z.infer<typeof OutboundEventType>;
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;
export type WebhookDeliveryStatus = z.infer<typeof WebhookDeliveryStatus>;
