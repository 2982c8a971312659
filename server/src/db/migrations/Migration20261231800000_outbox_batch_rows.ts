import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox batches (Migration20261231210000) hold their events as rows of the resources' own
 * tables: one array column per event type the batched hot writes carry
 * (modules/events/outbox.ts BATCHED_EVENTS), typed with the table's row type, instead of a JSON
 * array built in the hot statement.
 *
 * Building that JSON (each column's text, then pglz compression of the ~20 KB a 16-conversion
 * statement makes) was most of what an endpoint cost a conversion: measured on PostgreSQL alone,
 * 0.22 ms per 16-conversion statement as JSON against 0.04 ms as row arrays (README, Outbound
 * events). The values are the same ones the statement wrote, copied as they are; the relay makes
 * the JSON when it expands a batch (`to_jsonb` of each row), off the writes' path.
 *
 * Stored uncompressed, and in the row itself up to a page (`storage external`, `toast_tuple_target`):
 * a batch lives for milliseconds, until the relay expands it, and compressing its few kilobytes
 * cost the hot statement more than storing them (0.046 → 0.028 ms per 16-conversion statement).
 *
 * `events` stays, nullable, for the batches written by an earlier release (a rolling upgrade):
 * the relay expands both.
 *
 * For whoever changes these tables later: a column typed with a table's row type ties that table
 * to this one. PostgreSQL refuses, while such a column exists, any ALTER of `conversions`,
 * `commissions` or `customers` that would rewrite it or fill stored rows: a column's type changed,
 * a column added with a default ("cannot alter table … because column
 * outbound_event_batches.… uses its row type"). Adding a nullable column without a default, or
 * dropping one, is unaffected. Write such a migration's statements inside
 * `rewritingBatchedTables(…)` (modules/events/outbox.ts): the pending batches are kept, as JSON,
 * and the columns come back after (test/events/delivery.test.ts).
 */
export class Migration20261231800000_outbox_batch_rows extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table outbound_event_batches
  alter column events drop not null,
  add column conversion_created conversions[],
  add column commission_created commissions[],
  add column customer_created customers[],
  add column customer_updated customers[],
  alter column conversion_created set storage external,
  alter column commission_created set storage external,
  alter column customer_created set storage external,
  alter column customer_updated set storage external;
alter table outbound_event_batches set (toast_tuple_target = 8160);`);
  }
}
