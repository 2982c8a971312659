import { Migration } from '@mikro-orm/migrations';

/**
 * People: merchants' users and their sessions (spec/ledger.md, "People"). The tables better-auth
 * reads and writes (users, sessions, accounts, verifications: modules/people/auth.ts maps its
 * field names to these snake_case columns) and our invitations.
 *
 * A user belongs to one organization (users.organization_id) and signs in by e-mail, so an e-mail
 * is unique across the service: one person working for two organizations uses two addresses.
 * Sessions, accounts (the argon2id password hash) and verification tokens hang off the user (or
 * an e-mail, for verifications) and live as long as it does; they carry no organization_id
 * because they are looked up by their token, never listed per organization. All five are Citus
 * reference tables (db/distribution.ts): sign-in finds them before the organization is known.
 */
export class Migration20261228000000_people extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table users (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  email text not null,
  name text not null,
  email_verified boolean not null default false,
  image text,
  role text not null check (role in ('owner', 'member')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index users_email_unique on users (email);
create index users_organization on users (organization_id, created_at, id);

create table sessions (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  token text not null unique,
  expires_at timestamptz not null,
  ip_address text,
  user_agent text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index sessions_user on sessions (user_id);

create table accounts (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  account_id text not null,
  provider_id text not null,
  access_token text,
  refresh_token text,
  id_token text,
  access_token_expires_at timestamptz,
  refresh_token_expires_at timestamptz,
  scope text,
  password text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index accounts_user on accounts (user_id);

create table verifications (
  id uuid primary key,
  identifier text not null,
  value text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index verifications_identifier on verifications (identifier);

create table invitations (
  id uuid not null,
  organization_id uuid not null references organizations (id),
  email text not null,
  role text not null check (role in ('owner', 'member')),
  token_hash text not null unique,
  invited_by uuid references users (id) on delete set null,
  expires_at timestamptz not null,
  accepted_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (organization_id, id)
);
create index invitations_organization on invitations (organization_id, created_at, id);
`);
  }
}
