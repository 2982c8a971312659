import { Migration } from '@mikro-orm/migrations';

/**
 * Every table carries organization_id and every unique key starts with it: idempotency lives in
 * these constraints (written with INSERT ... ON CONFLICT), and the schema can be sharded by
 * organization later. Money is numeric, never float.
 */
export class Migration20261122000000_initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table organizations (
  id uuid primary key,
  name text not null,
  created_at timestamptz not null default now()
);

create table api_keys (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  key_hash text not null,
  redacted text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz null,
  constraint api_keys_key_hash_unique unique (key_hash)
);
create index api_keys_organization_idx on api_keys (organization_id, created_at);

create table programs (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  name text not null,
  commission_type text not null check (commission_type in ('percent', 'flat')),
  commission_value numeric not null check (commission_value >= 0),
  click_window_days integer not null check (click_window_days >= 0),
  commission_window_months integer null check (commission_window_months >= 1),
  currency char(3) not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index programs_organization_idx on programs (organization_id, created_at, id);

create table affiliates (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  program_id uuid not null references programs (id),
  email text not null,
  name text null,
  slug text not null,
  created_at timestamptz not null default now(),
  constraint affiliates_slug_unique unique (organization_id, slug),
  constraint affiliates_membership_unique unique (organization_id, program_id, email)
);
create index affiliates_list_idx on affiliates (organization_id, created_at, id);

create table clicks (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  affiliate_id uuid not null references affiliates (id),
  program_id uuid not null references programs (id),
  cookie_id text not null,
  landing_url text null,
  referrer text null,
  user_agent text null,
  ip text null,
  occurred_at timestamptz not null,
  created_at timestamptz not null default now(),
  constraint clicks_cookie_unique unique (organization_id, cookie_id)
);

create table customers (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  customer_id text not null,
  status text not null check (status in ('trial', 'active', 'capped', 'canceled')),
  affiliate_id uuid not null references affiliates (id),
  program_id uuid not null references programs (id),
  click_id uuid null references clicks (id),
  email text null,
  name text null,
  first_conversion_at timestamptz null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint customers_customer_id_unique unique (organization_id, customer_id)
);
create index customers_customer_id_idx on customers (customer_id);

create table conversions (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  external_id text not null,
  amount numeric not null check (amount >= 0),
  currency char(3) not null,
  kind text not null check (kind in ('initial', 'recurring')),
  commission_amount numeric(20, 2) not null,
  customer_id text null,
  affiliate_id uuid not null references affiliates (id),
  program_id uuid not null references programs (id),
  click_id uuid null references clicks (id),
  occurred_at timestamptz not null,
  created_at timestamptz not null default now(),
  constraint conversions_external_id_unique unique (organization_id, external_id)
);
create index conversions_list_idx on conversions (organization_id, occurred_at desc, id desc);
create index conversions_customer_idx on conversions (organization_id, customer_id, occurred_at desc);
create index conversions_external_id_idx on conversions (external_id);
`);
  }
}
