import { defineEntity } from '@mikro-orm/core';

export const OrganizationEntity = defineEntity({
  name: 'Organization',
  tableName: 'organizations',
  properties: (p) => ({
    id: p.uuid().primary(),
    name: p.text(),
    /** Clicks older than this many days that nothing refers to are deleted (modules/clicks/click-retention.ts); null keeps them. */
    click_retention_days: p.integer().nullable(),
    created_at: p.datetime().defaultRaw('now()'),
  }),
});

export const ApiKeyEntity = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: (p) => ({
    id: p.uuid().primary(),
    organization_id: p.uuid(),
    key_hash: p.text(),
    redacted: p.text(),
    created_at: p.datetime().defaultRaw('now()'),
    revoked_at: p.datetime().nullable(),
  }),
});
