import { Migration } from '@mikro-orm/migrations';

/**
 * What the click retention and the operational metrics read, by index (docs/data-lifecycle.md,
 * "Retention at scale"; docs/operations.md):
 *
 * - `clicks_retention_idx`, `suppressed_clicks_retention_idx` (organization_id, created_at, id):
 *   the retention walks each organization's oldest clicks in this order, a batch of index entries
 *   at a time from a cursor. With only the BRIN on created_at, each batch read every due click and
 *   sorted them (seconds per batch at a million due clicks: the job timed out and never finished).
 * - `webhook_deliveries_pending_idx` (created_at) where pending: the outbound webhook backlog
 *   (its size and its oldest delivery), read on every scrape of /metrics.
 *
 * `if not exists`: on a large table, an operator creates them beforehand with CREATE INDEX
 * CONCURRENTLY (same names and definitions), which does not block inserts; this migration, run in
 * a transaction, would hold the table's inserts while it builds them.
 */
export class Migration20270113000000_retention_at_scale extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index if not exists clicks_retention_idx on clicks (organization_id, created_at, id);
create index if not exists suppressed_clicks_retention_idx on suppressed_clicks (organization_id, created_at, id);
create index if not exists webhook_deliveries_pending_idx on webhook_deliveries (created_at) where status = 'pending';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists clicks_retention_idx;
drop index if exists suppressed_clicks_retention_idx;
drop index if exists webhook_deliveries_pending_idx;`);
  }
}
