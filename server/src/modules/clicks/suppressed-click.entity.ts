import { defineEntity } from '@mikro-orm/core';

/**
 * A click flood's surplus (fraud rule click_flood), kept for the record with the columns of a
 * click but in a table of its own: no click count, report or attribution reads it.
 */
export const SuppressedClickEntity = defineEntity({
  name: 'SuppressedClick',
  tableName: 'suppressed_clicks',
  properties: (p) => ({
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
  }),
});
