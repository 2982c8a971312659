import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox of the batched hot writes (modules/events/outbox.ts batchedEventsOf): one row per
 * organization and statement, holding every event of that statement (a batch of conversions
 * writes a `conversion.created` and a `commission.created` per conversion, renewals also a
 * `customer.updated`), instead of a row per event with its two index entries. The relay expands
 * a batch into `outbound_events` rows (one per event, each with its own id: the `webhook-id`) in
 * the transaction that deletes it, before it dispatches them (delivery-statements.ts).
 *
 * - `events` is `json` (a JSON array of `{type, resource}`), written as the statement produced it,
 *   not parsed into jsonb on the hot path; it becomes jsonb when expanded.
 * - An index by `created_at` (rows appended in its order): the relay takes the oldest batches, by
 *   row address. The primary key is the tenant tables' `(id, organization_id)` (Citus).
 */
export class Migration20261231210000_outbox_batches extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table outbound_event_batches (
  id uuid not null default gen_random_uuid(),
  organization_id uuid not null,
  events json not null,
  created_at timestamptz not null default now(),
  primary key (id, organization_id)
);
create index outbound_event_batches_created_idx on outbound_event_batches (created_at);`);
  }
}
