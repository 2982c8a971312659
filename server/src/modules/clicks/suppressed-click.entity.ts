import { defineEntity } from '@mikro-orm/core';
import { clickProperties } from './click.entity.js';

/**
 * A click flood's surplus (fraud rule click_flood), kept for the record with the columns of a
 * click but in a table of its own: no click count, report or attribution reads it.
 */
export const SuppressedClickEntity = defineEntity({
  name: 'SuppressedClick',
  tableName: 'suppressed_clicks',
  properties: clickProperties(),
});
