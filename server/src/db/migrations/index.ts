import type { MigrationObject } from '@mikro-orm/core';
import { Migration20270101000000_baseline } from './Migration20270101000000_baseline.js';

/** Every committed migration, in order. A new migration is appended here. */
export const migrationsList: MigrationObject[] = [{ name: 'Migration20270101000000_baseline', class: Migration20270101000000_baseline }];
