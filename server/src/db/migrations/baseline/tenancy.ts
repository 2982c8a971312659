/** The baseline's organization-level tables: tenants, their keys and people (reference tables under Citus), provider integrations and their inbound webhooks' records. */
export const TENANCY = `
create table organizations (
  id uuid not null,
  name text not null,
  created_at timestamptz default now() not null,
  constraint organizations_pkey primary key (id)
);

create table api_keys (
  id uuid not null,
  organization_id uuid not null,
  key_hash text not null,
  redacted text not null,
  created_at timestamptz default now() not null,
  revoked_at timestamptz,
  constraint api_keys_key_hash_unique unique (key_hash),
  constraint api_keys_pkey primary key (id),
  constraint api_keys_organization_id_fkey foreign key (organization_id) references organizations (id)
);
create index api_keys_organization_idx on api_keys (organization_id, created_at);

create table users (
  id uuid not null,
  organization_id uuid not null,
  email text not null,
  name text not null,
  email_verified boolean default false not null,
  image text,
  role text not null,
  created_at timestamptz default now() not null,
  updated_at timestamptz default now() not null,
  constraint users_role_check check (role in ('owner', 'member')),
  constraint users_pkey primary key (id),
  constraint users_organization_id_fkey foreign key (organization_id) references organizations (id)
);
create unique index users_email_unique on users (email);
create index users_organization on users (organization_id, created_at, id);

create table accounts (
  id uuid not null,
  user_id uuid not null,
  account_id text not null,
  provider_id text not null,
  access_token text,
  refresh_token text,
  id_token text,
  access_token_expires_at timestamptz,
  refresh_token_expires_at timestamptz,
  scope text,
  password text,
  created_at timestamptz default now() not null,
  updated_at timestamptz default now() not null,
  constraint accounts_pkey primary key (id),
  constraint accounts_user_id_fkey foreign key (user_id) references users (id) on delete cascade
);
create index accounts_user on accounts (user_id);

create table sessions (
  id uuid not null,
  user_id uuid not null,
  token text not null,
  expires_at timestamptz not null,
  ip_address text,
  user_agent text,
  created_at timestamptz default now() not null,
  updated_at timestamptz default now() not null,
  constraint sessions_pkey primary key (id),
  constraint sessions_token_key unique (token),
  constraint sessions_user_id_fkey foreign key (user_id) references users (id) on delete cascade
);
create index sessions_user on sessions (user_id);

create table verifications (
  id uuid not null,
  identifier text not null,
  value text not null,
  expires_at timestamptz not null,
  created_at timestamptz default now() not null,
  updated_at timestamptz default now() not null,
  constraint verifications_pkey primary key (id)
);
create index verifications_identifier on verifications (identifier);

create table invitations (
  id uuid not null,
  organization_id uuid not null,
  email text not null,
  role text not null,
  token_hash text not null,
  invited_by uuid,
  expires_at timestamptz not null,
  accepted_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz default now() not null,
  constraint invitations_role_check check (role in ('owner', 'member')),
  constraint invitations_pkey primary key (organization_id, id),
  constraint invitations_token_hash_key unique (token_hash),
  constraint invitations_invited_by_fkey foreign key (invited_by) references users (id) on delete set null,
  constraint invitations_organization_id_fkey foreign key (organization_id) references organizations (id)
);
create index invitations_organization on invitations (organization_id, created_at, id);

create table rate_limits (
  key varchar(255) not null,
  points integer default 0 not null,
  expire bigint,
  constraint rate_limits_pkey primary key (key)
);

create table integrations (
  id uuid not null,
  organization_id uuid not null,
  provider text not null,
  signing_secret text not null,
  created_at timestamptz default now() not null,
  updated_at timestamptz default now() not null,
  constraint integrations_provider_check check (provider in ('stripe', 'paddle', 'lemonsqueezy', 'polar', 'chargebee')),
  constraint integrations_pkey primary key (id, organization_id),
  constraint integrations_provider_unique unique (organization_id, provider),
  constraint integrations_organization_id_fkey foreign key (organization_id) references organizations (id)
);

create table payment_references (
  organization_id uuid not null,
  reference text not null,
  external_id text not null,
  created_at timestamptz default now() not null,
  constraint payment_references_pkey primary key (organization_id, reference),
  constraint payment_references_organization_id_fkey foreign key (organization_id) references organizations (id)
);

create table webhook_events (
  organization_id uuid not null,
  provider text not null,
  event_id text not null,
  event_type text not null,
  outcome text not null,
  detail text,
  received_at timestamptz default now() not null,
  constraint webhook_events_pkey primary key (organization_id, provider, event_id),
  constraint webhook_events_organization_id_fkey foreign key (organization_id) references organizations (id)
);
create index webhook_events_received_idx on webhook_events (organization_id, received_at, provider, event_id);

create table webhook_rejections (
  organization_id uuid not null,
  provider text not null,
  reason text not null,
  requests bigint default 1 not null,
  first_received_at timestamptz not null,
  last_received_at timestamptz not null,
  constraint webhook_rejections_pkey primary key (organization_id, provider, reason),
  constraint webhook_rejections_organization_id_fkey foreign key (organization_id) references organizations (id)
);
`;
