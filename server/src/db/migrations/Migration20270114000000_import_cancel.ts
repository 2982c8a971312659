import { Migration } from '@mikro-orm/migrations';

/**
 * An import can be cancelled (POST /api/imports/{id}/cancel): `imports.status` takes `cancelled`.
 * Its check constraint is replaced in one transaction; the table holds one row per import.
 */
export class Migration20270114000000_import_cancel extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table imports
  drop constraint imports_status_check,
  add constraint imports_status_check check (status in ('running', 'succeeded', 'failed', 'cancelled'))`);
  }
}
