import { Migration } from '@mikro-orm/migrations';

/**
 * The partner portal (spec/ledger.md, "People"): how a program takes applications, the terms a
 * partner accepts and the merchant's site their links point to; partners' one-time sign-in links
 * and sessions.
 *
 * A partner is an e-mail within an organization (the same address with two merchants is two
 * partners, seen separately), so links and sessions carry `organization_id` and are found by it
 * and their token's hash together: distributed tables like the rest of a tenant's rows. Tokens
 * are stored as their SHA-256 only.
 */
export class Migration20261230100000_partner_portal extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table programs
  add column signup text not null default 'approval' check (signup in ('open', 'approval', 'closed')),
  add column terms text null,
  add column website_url text null;
alter table affiliates add column terms_accepted_at timestamptz null;

create table partner_sign_in_links (
  id uuid not null,
  organization_id uuid not null references organizations (id),
  email text not null,
  token_hash text not null,
  expires_at timestamptz not null,
  used_at timestamptz null,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  constraint partner_sign_in_links_token_unique unique (organization_id, token_hash)
);
create index partner_sign_in_links_expiry on partner_sign_in_links (organization_id, expires_at);

create table partner_sessions (
  id uuid not null,
  organization_id uuid not null references organizations (id),
  email text not null,
  token_hash text not null,
  expires_at timestamptz not null,
  ip_address text null,
  user_agent text null,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  constraint partner_sessions_token_unique unique (organization_id, token_hash)
);
create index partner_sessions_partner on partner_sessions (organization_id, email);
`);
  }
}
