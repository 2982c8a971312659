import { defineEntity, p } from '@mikro-orm/core';

/** A click's columns: a counted click (`clicks`) and a flood's surplus (`suppressed_clicks`) have the same. */
export const clickProperties = () => ({
  id: p.uuid().primary(),
  organization_id: p.uuid(),
  affiliate_id: p.uuid(),
  program_id: p.uuid(),
  cookie_id: p.text(),
  landing_url: p.text().nullable(),
  referrer: p.text().nullable(),
  user_agent: p.text().nullable(),
  ip: p.text().nullable(),
  occurred_at: p.datetime(),
  created_at: p.datetime().defaultRaw('now()'),
});

export const ClickEntity = defineEntity({
  name: 'Click',
  tableName: 'clicks',
  properties: clickProperties(),
});
