import { Migration } from '@mikro-orm/migrations';

/**
 * Outbound events (shared/spec/ledger.md, "Outbound events"; modules/events):
 * - `webhook_endpoints`: where an organization wants its events, with the signing secret
 *   (encrypted under ENCRYPTION_KEY when set: security/secret-box.ts) and, for 24 hours after a
 *   rotation, the previous one, which signs alongside.
 * - `outbound_events`: the transactional outbox. A row is written by the same statement or
 *   transaction as the change it describes (a conversion's batched insert carries it as one more
 *   data-modifying CTE), with a snapshot of the resource as committed; `dispatched_at` is set when
 *   the relay has turned it into deliveries and queued them. No foreign key to organizations: the
 *   row comes from a row that has one, and the hot path is spared the check.
 * - `webhook_deliveries`: one event to one endpoint, its attempts and its outcome (the delivery
 *   log); the job queue (pg-boss, schema `pgboss`, installed by pg-boss itself) only carries
 *   "attempt delivery d now".
 * Keys as Citus needs them (db/distribution.ts): every primary, unique and foreign key includes
 * `organization_id`, `id` first so that a lookup by id alone still uses the primary key.
 */
export class Migration20261229000000_outbound_events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table webhook_endpoints (
  id uuid not null,
  organization_id uuid not null references organizations (id),
  url text not null,
  description text null,
  events text[] not null check (cardinality(events) > 0),
  enabled boolean not null default true,
  disabled_reason text null,
  secret text not null,
  previous_secret text null,
  previous_secret_expires_at timestamptz null,
  secret_rotated_at timestamptz null,
  failing_since timestamptz null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (id, organization_id)
);
create index webhook_endpoints_list_idx on webhook_endpoints (organization_id, created_at, id);

create table outbound_events (
  id uuid not null,
  organization_id uuid not null,
  type text not null,
  resource jsonb not null,
  created_at timestamptz not null default now(),
  dispatched_at timestamptz null,
  primary key (id, organization_id)
);
create index outbound_events_undispatched_idx on outbound_events (created_at, id) where dispatched_at is null;

create table webhook_deliveries (
  id uuid not null,
  organization_id uuid not null references organizations (id),
  endpoint_id uuid not null,
  event_id uuid not null,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  attempts integer not null default 0,
  last_response_status integer null,
  last_response_body text null,
  last_error text null,
  last_attempt_at timestamptz null,
  next_attempt_at timestamptz null,
  requeue boolean not null default false,
  created_at timestamptz not null default now(),
  primary key (id, organization_id),
  foreign key (endpoint_id, organization_id) references webhook_endpoints (id, organization_id) on delete cascade,
  foreign key (event_id, organization_id) references outbound_events (id, organization_id),
  constraint webhook_deliveries_once unique (endpoint_id, event_id, organization_id)
);
create index webhook_deliveries_list_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);
create index webhook_deliveries_event_idx on webhook_deliveries (event_id);
create index webhook_deliveries_requeue_idx on webhook_deliveries (created_at) where requeue;
`);
  }
}
