import { defineEntity } from '@mikro-orm/core';

/** A provider event handled once: a redelivery finds it here and is answered `duplicate`. */
export const WebhookEventEntity = defineEntity({
  name: 'WebhookEvent',
  tableName: 'webhook_events',
  properties: (p) => ({
    organization_id: p.uuid().primary(),
    provider: p.text().primary(),
    event_id: p.text().primary(),
    event_type: p.text(),
    outcome: p.text(),
    detail: p.text().nullable(),
    received_at: p.datetime().defaultRaw('now()'),
  }),
});

/** Another id of a charge (a Stripe payment intent of an invoice, say): a refund naming it finds the conversion. */
export const PaymentReferenceEntity = defineEntity({
  name: 'PaymentReference',
  tableName: 'payment_references',
  properties: (p) => ({
    organization_id: p.uuid().primary(),
    reference: p.text().primary(),
    external_id: p.text(),
    created_at: p.datetime().defaultRaw('now()'),
  }),
});

/**
 * Requests to a webhook URL refused before verification, counted per reason (never their body:
 * it was not verified). Bounded by the reasons, whoever posts.
 */
export const WebhookRejectionEntity = defineEntity({
  name: 'WebhookRejection',
  tableName: 'webhook_rejections',
  properties: (p) => ({
    organization_id: p.uuid().primary(),
    provider: p.text().primary(),
    reason: p.text().primary(),
    requests: p.bigint().default(1),
    first_received_at: p.datetime(),
    last_received_at: p.datetime(),
  }),
});
