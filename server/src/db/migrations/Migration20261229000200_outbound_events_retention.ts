import { Migration } from '@mikro-orm/migrations';

/**
 * Retention of outbound events (modules/events/retention.ts): the hourly job finds the events
 * dispatched before the cut-off, oldest first, by this index. It is written when the relay marks
 * an event dispatched (delivery's own update, which already writes a new row version), never by
 * the statement that writes the event.
 */
export class Migration20261229000200_outbound_events_retention extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index outbound_events_dispatched_idx on outbound_events (dispatched_at) where dispatched_at is not null;`);
  }
}
