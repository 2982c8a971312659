import { defineEntity } from '@mikro-orm/core';

export const IntegrationEntity = defineEntity({
  name: 'Integration',
  tableName: 'integrations',
  properties: (p) => ({
    id: p.uuid().primary(),
    organization_id: p.uuid(),
    provider: p.enum([
      'stripe',
      'paddle',
      'lemonsqueezy',
      'polar',
      'chargebee',
      'paypal_payouts',
      'stripe_connect',
      'wise',
    ] as const),
    /** A payment provider's webhook signing secret, sealed (null for a payout rail). */
    signing_secret: p.text().nullable(),
    /** A payout rail's credentials: one sealed JSON document (null for a payment provider). */
    credentials: p.text().nullable(),
    created_at: p.datetime().defaultRaw('now()'),
    updated_at: p.datetime().defaultRaw('now()'),
  }),
});
