import { defineEntity } from '@mikro-orm/core';

export const IntegrationEntity = defineEntity({
  name: 'Integration',
  tableName: 'integrations',
  properties: (p) => ({
    id: p.uuid().primary(),
    organization_id: p.uuid(),
    provider: p.enum(['stripe', 'paddle', 'lemonsqueezy', 'polar', 'chargebee'] as const),
    signing_secret: p.text(),
    created_at: p.datetime().defaultRaw('now()'),
    updated_at: p.datetime().defaultRaw('now()'),
  }),
});
