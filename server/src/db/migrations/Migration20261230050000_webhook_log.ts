import { Migration } from '@mikro-orm/migrations';

/**
 * The log of provider webhooks received, for the dashboard's Integrations page (GET
 * /api/integrations/events): the handled events, newest first, by an index on their time; and the
 * requests rejected before verification (no secret, a wrong signature, a malformed body), counted
 * per (organization, provider, reason) rather than kept one by one, since anyone may post to the
 * public webhook URL: the table stays as small as the list of reasons, and no unverified body or
 * id is ever stored.
 */
export class Migration20261230050000_webhook_log extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create index webhook_events_received_idx on webhook_events (organization_id, received_at, provider, event_id);

create table webhook_rejections (
  organization_id uuid not null references organizations (id),
  provider text not null,
  reason text not null,
  requests bigint not null default 1,
  first_received_at timestamptz not null,
  last_received_at timestamptz not null,
  constraint webhook_rejections_pkey primary key (organization_id, provider, reason)
);
`);
  }
}
