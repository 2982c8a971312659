import { Migration } from '@mikro-orm/migrations';

/**
 * Program rules and fraud signals (shared/spec/ledger.md, "Program rules and fraud signals"):
 * - programs: attribution_model, commission_max_conversions, commission_tiers, fraud_rules;
 * - affiliates: commission_value (a per-affiliate override), and the partner's last portal
 *   sign-in address and user agent (self_referral compares a click with them; the portal sets them);
 * - customers: paid_conversions, counted while the program caps by count;
 * - commissions: the rate a sale was computed with, and why an entry is on hold;
 * - coupons: promotion codes an affiliate owns, unique per organization case-insensitively;
 * - suppressed_clicks: a click flood's surplus, kept for the record apart from `clicks`, so that
 *   no click count (reports, the portal) can include it.
 * Every new column has a default or is nullable: no table is rewritten.
 */
export class Migration20261230000000_program_rules extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table programs
  add column attribution_model text not null default 'last_click' check (attribution_model in ('last_click', 'first_click')),
  add column commission_max_conversions integer check (commission_max_conversions >= 1),
  add column commission_tiers jsonb,
  add column fraud_rules jsonb not null default '{"self_referral": true, "disposable_email": true, "click_flood": true, "fast_conversion": false}';

alter table affiliates
  add column commission_value numeric,
  add column portal_sign_in_ip text,
  add column portal_sign_in_user_agent text;

alter table customers add column paid_conversions integer not null default 0;

alter table commissions
  add column rate jsonb,
  add column hold_reasons jsonb;

create table coupons (
  id uuid not null,
  organization_id uuid not null references organizations (id),
  code text not null,
  affiliate_id uuid not null,
  program_id uuid not null,
  created_at timestamptz not null default now(),
  constraint coupons_pkey primary key (id, organization_id),
  constraint coupons_affiliate_id_fkey foreign key (affiliate_id, organization_id) references affiliates (id, organization_id),
  constraint coupons_program_id_fkey foreign key (program_id, organization_id) references programs (id, organization_id)
);
create unique index coupons_code_unique on coupons (organization_id, lower(code));
create index coupons_affiliate_idx on coupons (organization_id, affiliate_id, created_at);

create table suppressed_clicks (like clicks including defaults);
alter table suppressed_clicks add constraint suppressed_clicks_pkey primary key (id, organization_id);
create index suppressed_clicks_created_at_brin on suppressed_clicks using brin (created_at);
`);
  }
}
