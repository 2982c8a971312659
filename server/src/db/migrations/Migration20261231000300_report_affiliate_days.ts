import { Migration } from '@mikro-orm/migrations';

/**
 * The affiliates report over any days (a rolling "last 30 days", a year from today), not only whole
 * months: `report_affiliate_days`, the figures per organization, UTC day, affiliate and currency,
 * folded from the same deltas as the running totals at month boundaries (report_apply, migration
 * 20261227000000_reports). A period boundary inside a month is the nearer month boundary plus or
 * minus the days between them (at most half a month of these rows); before, the partial months
 * at both ends were aggregated from the raw rows: 120 000 clicks for a rolling 30 days, 1.4 to 2 s
 * on bench/ledger-seeded.ts's database.
 *
 * The summaries start over (report_reset): the fold rebuilds them, days included, from the raw
 * tables, oldest first; the reports stay exact meanwhile (what is not folded is read live).
 */
export class Migration20261231000300_report_affiliate_days extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table report_affiliate_days (
  organization_id uuid not null,
  day date not null,
  affiliate_id uuid not null,
  currency text not null,
  program_id uuid not null,
  entries bigint not null default 0,
  clicks bigint not null default 0,
  customers bigint not null default 0,
  conversions bigint not null default 0,
  revenue numeric not null default 0,
  refunded numeric not null default 0,
  pending numeric not null default 0,
  approved numeric not null default 0,
  paid numeric not null default 0,
  reversed numeric not null default 0,
  rejected numeric not null default 0,
  on_hold numeric not null default 0,
  constraint report_affiliate_days_pkey primary key (organization_id, day, affiliate_id, currency)
);

create or replace function report_apply(deltas report_delta[]) returns void
language plpgsql
set enable_seqscan = off
set jit = off
as $$
declare
  through date;
  grouped report_delta[];
begin
  select totals_through into through from report_fold_state;
  -- The deltas per key and month (rows that sum to zero dropped).
  select array_agg(g) into grouped from (
    select row(d.organization_id, d.affiliate_id, min(d.program_id::text)::uuid, d.currency, date_trunc('month', d.at at time zone 'UTC') at time zone 'UTC',
      sum(d.clicks), sum(d.customers), sum(d.conversions), sum(d.revenue), sum(d.refunded),
      sum(d.pending), sum(d.approved), sum(d.paid), sum(d.reversed), sum(d.rejected), sum(d.on_hold), sum(d.entries))::report_delta as g
    from unnest(deltas) d
    group by d.organization_id, d.affiliate_id, d.currency, date_trunc('month', d.at at time zone 'UTC')
    having sum(d.clicks) <> 0 or sum(d.customers) <> 0 or sum(d.conversions) <> 0 or sum(d.revenue) <> 0 or sum(d.refunded) <> 0
      or sum(d.pending) <> 0 or sum(d.approved) <> 0 or sum(d.paid) <> 0 or sum(d.reversed) <> 0 or sum(d.rejected) <> 0
      or sum(d.on_hold) <> 0 or sum(d.entries) <> 0
  ) x;
  if grouped is not null then
    -- Every key has a row at each month boundary from the one after its first month up to
    -- totals_through: a new key (or an older month of a known one) gets its rows, at zero.
    insert into report_affiliate_totals (organization_id, before, affiliate_id, currency, program_id)
    select k.organization_id, b::date, k.affiliate_id, k.currency, k.program_id
    from (
      select g.organization_id, g.affiliate_id, g.currency, min(g.program_id::text)::uuid as program_id, min(g.at) as first_month
      from unnest(grouped) g group by 1, 2, 3
    ) k
    cross join lateral generate_series((k.first_month at time zone 'UTC') + interval '1 month', through::timestamp, interval '1 month') b
    on conflict (organization_id, before, affiliate_id, currency) do nothing;
    -- Each month's delta added to every boundary after it.
    update report_affiliate_totals t set
      entries = t.entries + x.entries, clicks = t.clicks + x.clicks, customers = t.customers + x.customers,
      conversions = t.conversions + x.conversions, revenue = t.revenue + x.revenue, refunded = t.refunded + x.refunded,
      pending = t.pending + x.pending, approved = t.approved + x.approved, paid = t.paid + x.paid,
      reversed = t.reversed + x.reversed, rejected = t.rejected + x.rejected, on_hold = t.on_hold + x.on_hold
    from (
      select t2.organization_id, t2.before, t2.affiliate_id, t2.currency,
        sum(g.entries) as entries, sum(g.clicks) as clicks, sum(g.customers) as customers, sum(g.conversions) as conversions,
        sum(g.revenue) as revenue, sum(g.refunded) as refunded, sum(g.pending) as pending, sum(g.approved) as approved,
        sum(g.paid) as paid, sum(g.reversed) as reversed, sum(g.rejected) as rejected, sum(g.on_hold) as on_hold
      from unnest(grouped) g
      join report_affiliate_totals t2 on t2.organization_id = g.organization_id and t2.affiliate_id = g.affiliate_id and t2.currency = g.currency
        and t2.before > (g.at at time zone 'UTC')::date
      group by 1, 2, 3, 4
    ) x
    where t.organization_id = x.organization_id and t.before = x.before and t.affiliate_id = x.affiliate_id and t.currency = x.currency;
  end if;

  -- The same per affiliate and UTC day: a period boundary inside a month is a month boundary
  -- plus or minus the days between them (reports.repository.ts affiliatesStatement).
  insert into report_affiliate_days as r (organization_id, day, affiliate_id, currency, program_id,
    entries, clicks, customers, conversions, revenue, refunded, pending, approved, paid, reversed, rejected, on_hold)
  select d.organization_id, (d.at at time zone 'UTC')::date, d.affiliate_id, d.currency, min(d.program_id::text)::uuid,
    sum(d.entries), sum(d.clicks), sum(d.customers), sum(d.conversions), sum(d.revenue), sum(d.refunded),
    sum(d.pending), sum(d.approved), sum(d.paid), sum(d.reversed), sum(d.rejected), sum(d.on_hold)
  from unnest(deltas) d
  group by d.organization_id, (d.at at time zone 'UTC')::date, d.affiliate_id, d.currency
  having sum(d.clicks) <> 0 or sum(d.customers) <> 0 or sum(d.conversions) <> 0 or sum(d.revenue) <> 0 or sum(d.refunded) <> 0
    or sum(d.pending) <> 0 or sum(d.approved) <> 0 or sum(d.paid) <> 0 or sum(d.reversed) <> 0 or sum(d.rejected) <> 0
    or sum(d.on_hold) <> 0 or sum(d.entries) <> 0
  order by 1, 2, 3, 4
  on conflict (organization_id, day, affiliate_id, currency) do update set
    entries = r.entries + excluded.entries, clicks = r.clicks + excluded.clicks, customers = r.customers + excluded.customers,
    conversions = r.conversions + excluded.conversions, revenue = r.revenue + excluded.revenue,
    refunded = r.refunded + excluded.refunded, pending = r.pending + excluded.pending,
    approved = r.approved + excluded.approved, paid = r.paid + excluded.paid,
    reversed = r.reversed + excluded.reversed, rejected = r.rejected + excluded.rejected,
    on_hold = r.on_hold + excluded.on_hold;

  insert into report_program_days as r (organization_id, day, program_id, currency,
    clicks, customers, conversions, revenue, refunded, pending, approved, paid, reversed, rejected, on_hold)
  select d.organization_id, (d.at at time zone 'UTC')::date, d.program_id, d.currency,
    sum(d.clicks), sum(d.customers), sum(d.conversions), sum(d.revenue), sum(d.refunded),
    sum(d.pending), sum(d.approved), sum(d.paid), sum(d.reversed), sum(d.rejected), sum(d.on_hold)
  from unnest(deltas) d
  group by 1, 2, 3, 4
  having sum(d.clicks) <> 0 or sum(d.customers) <> 0 or sum(d.conversions) <> 0 or sum(d.revenue) <> 0 or sum(d.refunded) <> 0
    or sum(d.pending) <> 0 or sum(d.approved) <> 0 or sum(d.paid) <> 0 or sum(d.reversed) <> 0 or sum(d.rejected) <> 0 or sum(d.on_hold) <> 0
  on conflict (organization_id, day, program_id, currency) do update set
    clicks = r.clicks + excluded.clicks, customers = r.customers + excluded.customers,
    conversions = r.conversions + excluded.conversions, revenue = r.revenue + excluded.revenue,
    refunded = r.refunded + excluded.refunded, pending = r.pending + excluded.pending,
    approved = r.approved + excluded.approved, paid = r.paid + excluded.paid,
    reversed = r.reversed + excluded.reversed, rejected = r.rejected + excluded.rejected,
    on_hold = r.on_hold + excluded.on_hold;
end
$$;

create or replace function report_reset() returns void
language plpgsql
as $$
begin
  perform pg_advisory_xact_lock(7262010001);
  truncate report_affiliate_totals, report_affiliate_days, report_program_days, report_deferred_commissions;
  update report_fold_state set folded_before = '-infinity', folded_at = null, totals_through = null;
end
$$;

select report_reset();
`);
  }
}
