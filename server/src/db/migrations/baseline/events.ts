/** The baseline's outbound events: endpoints, the transactional outbox (rows, and the batches of the hot writes as JSON), deliveries. */
export const EVENTS = `
create table webhook_endpoints (
  id uuid not null,
  organization_id uuid not null,
  url text not null,
  description text,
  events text[] not null,
  enabled boolean default true not null,
  disabled_reason text,
  secret text not null,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  secret_rotated_at timestamptz,
  failing_since timestamptz,
  created_at timestamptz default now() not null,
  updated_at timestamptz default now() not null,
  constraint webhook_endpoints_events_check check (cardinality(events) > 0),
  constraint webhook_endpoints_pkey primary key (id, organization_id),
  constraint webhook_endpoints_organization_id_fkey foreign key (organization_id) references organizations (id)
);
create index webhook_endpoints_list_idx on webhook_endpoints (organization_id, created_at, id);

create table outbound_events (
  id uuid not null,
  organization_id uuid not null,
  type text not null,
  resource jsonb not null,
  created_at timestamptz default now() not null,
  dispatched_at timestamptz,
  constraint outbound_events_pkey primary key (id, organization_id),
  constraint outbound_events_organization_fkey foreign key (organization_id) references organizations (id)
);
create index outbound_events_dispatched_idx on outbound_events (dispatched_at) where (dispatched_at is not null);
create index outbound_events_undispatched_idx on outbound_events (created_at, id) where (dispatched_at is null);

create table outbound_event_batches (
  id uuid default gen_random_uuid() not null,
  organization_id uuid not null,
  conversion_created json,
  commission_created json,
  customer_created json,
  customer_updated json,
  created_at timestamptz default now() not null,
  constraint outbound_event_batches_pkey primary key (id, organization_id),
  constraint outbound_event_batches_organization_fkey foreign key (organization_id) references organizations (id)
) with (toast_tuple_target=8160);
alter table outbound_event_batches alter column conversion_created set storage external;
alter table outbound_event_batches alter column commission_created set storage external;
alter table outbound_event_batches alter column customer_created set storage external;
alter table outbound_event_batches alter column customer_updated set storage external;
create index outbound_event_batches_created_idx on outbound_event_batches (created_at);

create table webhook_deliveries (
  id uuid not null,
  organization_id uuid not null,
  endpoint_id uuid not null,
  event_id uuid not null,
  status text default 'pending' not null,
  attempts integer default 0 not null,
  last_response_status integer,
  last_response_body text,
  last_error text,
  last_attempt_at timestamptz,
  next_attempt_at timestamptz,
  requeue boolean default false not null,
  created_at timestamptz default now() not null,
  constraint webhook_deliveries_status_check check (status in ('pending', 'succeeded', 'failed')),
  constraint webhook_deliveries_once unique (endpoint_id, event_id, organization_id),
  constraint webhook_deliveries_pkey primary key (id, organization_id),
  constraint webhook_deliveries_endpoint_id_organization_id_fkey foreign key (endpoint_id, organization_id) references webhook_endpoints (id, organization_id) on delete cascade,
  constraint webhook_deliveries_event_id_organization_id_fkey foreign key (event_id, organization_id) references outbound_events (id, organization_id),
  constraint webhook_deliveries_organization_id_fkey foreign key (organization_id) references organizations (id)
) with (fillfactor=50);
create index webhook_deliveries_event_idx on webhook_deliveries (event_id);
create index webhook_deliveries_list_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);
create index webhook_deliveries_requeue_idx on webhook_deliveries (created_at) where requeue;
`;
