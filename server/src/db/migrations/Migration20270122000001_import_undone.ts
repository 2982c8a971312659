import { Migration } from '@mikro-orm/migrations';

/**
 * An undone import stays listed (DELETE /api/imports/{id}): `imports.status` takes `undone`, and
 * `undone_at` says when. Its check constraint is replaced in one transaction; the table holds one
 * row per import.
 */
export class Migration20270122000001_import_undone extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table imports
  add column undone_at timestamptz,
  drop constraint imports_status_check,
  add constraint imports_status_check check (status in ('running', 'succeeded', 'failed', 'cancelled', 'undone'))`);
  }
}
