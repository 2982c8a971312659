import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000_initial } from './Migration20261122000000_initial.js';
import { Migration20261201000000_webhooks } from './Migration20261201000000_webhooks.js';

/** Every committed migration, in order. A new migration is appended here. */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261122000000_initial', class: Migration20261122000000_initial },
  { name: 'Migration20261201000000_webhooks', class: Migration20261201000000_webhooks },
];
