/** The baseline's report read model: running totals per affiliate and month boundary, per affiliate and day, per program and day, and how far the fold has got. */
export const REPORT_TABLES = `
create table report_fold_state (
  singleton boolean default true not null,
  folded_before timestamptz not null,
  folded_at timestamptz,
  totals_through date,
  constraint report_fold_state_singleton_check check (singleton),
  constraint report_fold_state_pkey primary key (singleton)
) with (fillfactor=10);

create table report_affiliate_totals (
  organization_id uuid not null,
  before date not null,
  affiliate_id uuid not null,
  currency text not null,
  program_id uuid not null,
  entries bigint default 0 not null,
  clicks bigint default 0 not null,
  customers bigint default 0 not null,
  conversions bigint default 0 not null,
  revenue numeric default 0 not null,
  refunded numeric default 0 not null,
  pending numeric default 0 not null,
  approved numeric default 0 not null,
  paid numeric default 0 not null,
  reversed numeric default 0 not null,
  rejected numeric default 0 not null,
  on_hold numeric default 0 not null,
  constraint report_affiliate_totals_pkey primary key (organization_id, before, affiliate_id, currency),
  constraint report_affiliate_totals_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
);
create index report_affiliate_totals_key_idx on report_affiliate_totals (organization_id, affiliate_id, currency, before);

create table report_affiliate_revenue (
  organization_id uuid not null,
  before date not null,
  affiliate_id uuid not null,
  currency text not null,
  program_id uuid not null,
  revenue numeric not null,
  constraint report_affiliate_revenue_pkey primary key (organization_id, before, affiliate_id, currency),
  constraint report_affiliate_revenue_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
);

create table report_affiliate_days (
  organization_id uuid not null,
  day date not null,
  affiliate_id uuid not null,
  currency text not null,
  program_id uuid not null,
  entries bigint default 0 not null,
  clicks bigint default 0 not null,
  customers bigint default 0 not null,
  conversions bigint default 0 not null,
  revenue numeric default 0 not null,
  refunded numeric default 0 not null,
  pending numeric default 0 not null,
  approved numeric default 0 not null,
  paid numeric default 0 not null,
  reversed numeric default 0 not null,
  rejected numeric default 0 not null,
  on_hold numeric default 0 not null,
  constraint report_affiliate_days_pkey primary key (organization_id, day, affiliate_id, currency),
  constraint report_affiliate_days_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
);
create index report_affiliate_days_affiliate_idx on report_affiliate_days (organization_id, affiliate_id, day);

create table report_program_days (
  organization_id uuid not null,
  day date not null,
  program_id uuid not null,
  currency text not null,
  clicks bigint default 0 not null,
  customers bigint default 0 not null,
  conversions bigint default 0 not null,
  revenue numeric default 0 not null,
  refunded numeric default 0 not null,
  pending numeric default 0 not null,
  approved numeric default 0 not null,
  paid numeric default 0 not null,
  reversed numeric default 0 not null,
  rejected numeric default 0 not null,
  on_hold numeric default 0 not null,
  constraint report_program_days_pkey primary key (organization_id, day, program_id, currency),
  constraint report_program_days_program_fkey foreign key (program_id, organization_id) references programs (id, organization_id)
);

create table report_deferred_commissions (
  organization_id uuid not null,
  commission_id uuid not null,
  affiliate_id uuid not null,
  program_id uuid not null,
  currency text not null,
  period_at timestamptz not null,
  amount numeric not null,
  approves_at timestamptz not null,
  constraint report_deferred_commissions_pkey primary key (organization_id, commission_id),
  constraint report_deferred_commissions_commission_fkey foreign key (commission_id, organization_id) references commissions (id, organization_id)
);
create index report_deferred_commissions_due_idx on report_deferred_commissions (approves_at);
create index report_deferred_commissions_period_idx on report_deferred_commissions (organization_id, period_at);

insert into report_fold_state (singleton, folded_before, folded_at, totals_through) values (true, '-infinity', null, null);

create type report_delta as (
  organization_id uuid,
  affiliate_id uuid,
  program_id uuid,
  currency text,
  at timestamptz,
  clicks bigint,
  customers bigint,
  conversions bigint,
  revenue numeric,
  refunded numeric,
  pending numeric,
  approved numeric,
  paid numeric,
  reversed numeric,
  rejected numeric,
  on_hold numeric,
  entries bigint
);
`;
