import { Migration } from '@mikro-orm/migrations';

/**
 * The read model behind GET /api/reports/* (server/src/modules/reports/): summaries folded from
 * the raw tables in the background, plus indexes for the part not yet folded. A report adds the
 * summaries (what is folded) to a live aggregation of the rest, in one statement, so it is exact
 * and as fresh as the raw tables.
 *
 * - `report_affiliate_totals`: per organization, affiliate, currency and UTC month boundary
 *   (`before`), the running totals of everything before that boundary: clicks, customers,
 *   conversions, revenue, refunded, commission amounts by status, and `entries` (rows folded, so
 *   that a key with any activity in a period is known). A period of whole months is the difference
 *   of two boundaries: two rows per affiliate, however long the period. Every key has a row at
 *   every boundary from the one after its first month to `report_fold_state.totals_through`, the
 *   boundary after the watermark's month (the fold adds the next one, as a copy of the last, when
 *   the watermark enters a new month): folding oldest first touches one boundary per key.
 * - `report_program_days` (per organization, program, UTC day, currency): the same figures per
 *   day, for the time series. Clicks and customers carry no currency (`''`): a report shows them
 *   in the currency of the affiliate's program.
 * - `report_fold_state`: the watermark. Every click, customer, conversion and commission created
 *   before `folded_before` has been folded, except the commissions listed in
 *   `report_deferred_commissions`: entries still `pending` whose `approves_at` was after the fold
 *   (`folded_at`). Their status changes by the passing of time alone (commission-lifecycle.ts
 *   effectiveStatus), so they are read live, with their own index, until a later fold finds them
 *   due. A folded entry's status can then change only through an UPDATE.
 * - Nothing runs on INSERT of clicks, customers, conversions or commissions (the hot paths).
 *   UPDATEs of conversions (refunds) and commissions (approve, reject, payouts, refunds) fire
 *   statement triggers that move already folded figures from the old row's bucket to the new one,
 *   set-based (transition tables), and keep the deferred list right.
 * - Folding and those triggers are serialized by a transaction-scoped advisory lock (exclusive for
 *   the fold, shared for the triggers), so that a row changed while a fold runs is counted once,
 *   in its latest state. Another advisory lock, tried, lets one instance fold at a time.
 * - Rows are picked by created_at through BRIN indexes: a few pages of index, nothing measurable
 *   on insert, and the recent (not yet folded) rows are the last pages of the table. The fold
 *   summarizes new BRIN ranges itself (brin_summarize_new_values): no dependence on VACUUM.
 * - Assumed, and true of the service: clicks, customers and conversions are never deleted; a
 *   conversion's occurred_at, affiliate, program and currency and a customer's affiliate never
 *   change; a row is committed within the fold's lag (a minute) of its created_at.
 */
export class Migration20261227000000_reports extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table report_fold_state (
  singleton boolean primary key default true check (singleton),
  folded_before timestamptz not null,
  folded_at timestamptz null,
  totals_through date null
) with (fillfactor = 10); -- updated by every fold: room for its updates on its own page (HOT), without VACUUM
insert into report_fold_state (singleton, folded_before, folded_at, totals_through) values (true, '-infinity', null, null);

create table report_affiliate_totals (
  organization_id uuid not null,
  before date not null,
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
  constraint report_affiliate_totals_pkey primary key (organization_id, before, affiliate_id, currency)
);
-- A change in one month moves every later boundary of that key (report_apply).
create index report_affiliate_totals_key_idx on report_affiliate_totals (organization_id, affiliate_id, currency, before);

create table report_program_days (
  organization_id uuid not null,
  day date not null,
  program_id uuid not null,
  currency text not null,
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
  constraint report_program_days_pkey primary key (organization_id, day, program_id, currency)
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
  constraint report_deferred_commissions_pkey primary key (organization_id, commission_id)
);
create index report_deferred_commissions_period_idx on report_deferred_commissions (organization_id, period_at);
create index report_deferred_commissions_due_idx on report_deferred_commissions (approves_at);

create index clicks_created_at_brin on clicks using brin (created_at);
create index clicks_occurred_at_brin on clicks using brin (occurred_at);
create index customers_created_at_brin on customers using brin (created_at);
create index conversions_created_at_brin on conversions using brin (created_at);
create index commissions_created_at_brin on commissions using brin (created_at);

-- The functions below run with sequential scans off (a SET of the function, undone on return):
-- their rows are picked by index (BRIN on created_at, primary keys), whatever the statistics
-- say; without statistics the planner would scan whole tables. And no JIT, which that cost
-- would trigger.

-- One row of figures, as folded: the unit report_apply adds to both summaries.
create type report_delta as (
  organization_id uuid, affiliate_id uuid, program_id uuid, currency text, at timestamptz,
  clicks bigint, customers bigint, conversions bigint, revenue numeric, refunded numeric,
  pending numeric, approved numeric, paid numeric, reversed numeric, rejected numeric, on_hold numeric,
  entries bigint
);

-- The status bucket of a folded commission. A folded entry stored pending with an approves_at
-- was folded after that time (else it would be deferred): it is approved, now and from then on.
create function report_bucket(status text, approves_at timestamptz) returns text
language sql immutable parallel safe
as $$ select case when status = 'pending' and approves_at is not null then 'approved' else status end $$;

-- Whether a commission is left out of the summaries (deferred) when folded at \`at\`: still
-- pending, and approving itself later (its status will change with no UPDATE to tell).
create function report_deferred(status text, approves_at timestamptz, at timestamptz) returns boolean
language sql immutable parallel safe
as $$ select status = 'pending' and coalesce(approves_at > at, false) $$;

-- Adds the deltas to both summaries (rows whose figures sum to zero are skipped).
create function report_apply(deltas report_delta[]) returns void
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

-- A commission's figures as a delta (sign -1 to take it out), in its status bucket.
create function report_commission_delta(organization_id uuid, affiliate_id uuid, program_id uuid, currency text, at timestamptz, amount numeric, bucket text, sign int)
returns report_delta
language sql immutable
as $$
  select row(organization_id, affiliate_id, program_id, currency, at, 0, 0, 0, 0, 0,
    case when bucket = 'pending' then sign * amount else 0 end,
    case when bucket = 'approved' then sign * amount else 0 end,
    case when bucket = 'paid' then sign * amount else 0 end,
    case when bucket = 'reversed' then sign * amount else 0 end,
    case when bucket = 'rejected' then sign * amount else 0 end,
    case when bucket = 'on_hold' then sign * amount else 0 end, sign)::report_delta
$$;

-- Folds what was created in [folded_before, least(now() - lag, folded_before + span, the start of
-- the oldest other open transaction)) and the deferred entries now due. The caller holds the fold
-- lock (reports.repository.ts). Answers the new watermark.
create function report_fold(lag interval, span interval) returns timestamptz
language plpgsql
set enable_seqscan = off
set jit = off
as $$
declare
  w_old timestamptz;
  w_new timestamptz;
  oldest timestamptz;
  through date;
  target date;
  deltas report_delta[];
begin
  perform pg_advisory_xact_lock(7262010001);
  select folded_before into w_old from report_fold_state for update;
  if w_old = '-infinity' then
    select least((select min(created_at) from clicks), (select min(created_at) from customers),
                 (select min(created_at) from conversions), (select min(created_at) from commissions))
      into w_old;
    w_old := coalesce(w_old, now() - lag);
  end if;
  -- A transaction still open may yet commit rows stamped before now: never fold past its start.
  select min(xact_start) into oldest from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null;
  w_new := least(now() - lag, w_old + span, coalesce(oldest, 'infinity'));
  if w_new < w_old then w_new := w_old; end if;

  insert into report_deferred_commissions (organization_id, commission_id, affiliate_id, program_id, currency, period_at, amount, approves_at)
  select k.organization_id, k.id, k.affiliate_id, k.program_id, k.currency::text, coalesce(v.occurred_at, k.created_at), k.amount, k.approves_at
  from commissions k left join conversions v on v.id = k.conversion_id
  where k.created_at >= w_old and k.created_at < w_new and report_deferred(k.status, k.approves_at, now());

  select array_agg(d) into deltas from (
    select row(organization_id, affiliate_id, program_id, '', occurred_at, count(*), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, count(*))::report_delta as d
    from clicks where created_at >= w_old and created_at < w_new
    group by organization_id, affiliate_id, program_id, occurred_at
    union all
    select row(organization_id, affiliate_id, program_id, '', created_at, 0, count(*), 0, 0, 0, 0, 0, 0, 0, 0, 0, count(*))::report_delta
    from customers where created_at >= w_old and created_at < w_new
    group by organization_id, affiliate_id, program_id, created_at
    union all
    select row(organization_id, affiliate_id, program_id, currency::text, occurred_at, 0, 0, 1, amount, refunded_amount, 0, 0, 0, 0, 0, 0, 1)::report_delta
    from conversions where created_at >= w_old and created_at < w_new
    union all
    select report_commission_delta(k.organization_id, k.affiliate_id, k.program_id, k.currency::text, coalesce(v.occurred_at, k.created_at), k.amount, report_bucket(k.status, k.approves_at), 1)
    from commissions k left join conversions v on v.id = k.conversion_id
    where k.created_at >= w_old and k.created_at < w_new and not report_deferred(k.status, k.approves_at, now())
    union all
    select report_commission_delta(organization_id, affiliate_id, program_id, currency, period_at, amount, 'approved', 1)
    from report_deferred_commissions where approves_at <= now()
  ) s;

  -- Boundaries up to the one after the last month folded into (the watermark's, a day ahead:
  -- occurred_at may run minutes ahead of created_at): a new boundary starts as a copy of the last
  -- one (nothing was folded in between). Later months are all live (created after the watermark),
  -- and a report reads the totals at no later boundary than totals_through.
  select totals_through into through from report_fold_state;
  select greatest((date_trunc('month', (w_new + interval '1 day') at time zone 'UTC') + interval '1 month')::date,
                  (max(date_trunc('month', d.at at time zone 'UTC')) + interval '1 month')::date)
    into target from unnest(coalesce(deltas, '{}')) d;
  if through is null then
    update report_fold_state set totals_through = target;
  elsif through < target then
    insert into report_affiliate_totals
    select t.organization_id, b::date, t.affiliate_id, t.currency, t.program_id, t.entries, t.clicks, t.customers, t.conversions,
      t.revenue, t.refunded, t.pending, t.approved, t.paid, t.reversed, t.rejected, t.on_hold
    from report_affiliate_totals t
    cross join generate_series(through::timestamp + interval '1 month', target::timestamp, interval '1 month') b
    where t.before = through;
    update report_fold_state set totals_through = target;
  end if;

  if deltas is not null then perform report_apply(deltas); end if;
  delete from report_deferred_commissions where approves_at <= now();

  update report_fold_state set folded_before = w_new, folded_at = now();
  return w_new;
end
$$;

-- Starts the summaries over: the next folds rebuild them from the raw tables, oldest first. For
-- rows written with a created_at already behind the watermark (a bulk import or a backfill
-- migration that back-dates them), which the fold would otherwise never see. Reports stay exact
-- meanwhile (everything is live until folded again), only slower.
create function report_reset() returns void
language plpgsql
as $$
begin
  perform pg_advisory_xact_lock(7262010001);
  truncate report_affiliate_totals, report_program_days, report_deferred_commissions;
  update report_fold_state set folded_before = '-infinity', folded_at = null, totals_through = null;
end
$$;

-- Refunds (refunded_amount) and any other change of a folded conversion: out with the old row, in with the new.
create function report_conversions_changed() returns trigger
language plpgsql
set enable_seqscan = off
set jit = off
as $$
declare
  w timestamptz;
  deltas report_delta[];
begin
  if not exists (select 1 from changed_new) then return null; end if;
  perform pg_advisory_xact_lock_shared(7262010001);
  select folded_before into w from report_fold_state;
  select array_agg(d) into deltas from (
    select row(o.organization_id, o.affiliate_id, o.program_id, o.currency::text, o.occurred_at, 0, 0, -1, -o.amount, -o.refunded_amount, 0, 0, 0, 0, 0, 0, -1)::report_delta as d
    from changed_old o join changed_new n on n.id = o.id
    where o.created_at < w
      and (o.amount, o.refunded_amount, o.affiliate_id, o.program_id, o.currency, o.occurred_at) is distinct from (n.amount, n.refunded_amount, n.affiliate_id, n.program_id, n.currency, n.occurred_at)
    union all
    select row(n.organization_id, n.affiliate_id, n.program_id, n.currency::text, n.occurred_at, 0, 0, 1, n.amount, n.refunded_amount, 0, 0, 0, 0, 0, 0, 1)::report_delta
    from changed_old o join changed_new n on n.id = o.id
    where o.created_at < w
      and (o.amount, o.refunded_amount, o.affiliate_id, o.program_id, o.currency, o.occurred_at) is distinct from (n.amount, n.refunded_amount, n.affiliate_id, n.program_id, n.currency, n.occurred_at)
  ) s;
  if deltas is not null then perform report_apply(deltas); end if;
  return null;
end
$$;

create trigger report_conversions_changed after update on conversions
  referencing old table as changed_old new table as changed_new
  for each statement execute function report_conversions_changed();

-- A folded commission that changes (approve, reject, a payout, a refund) moves between buckets;
-- one that is or becomes pending with approves_at still ahead is (or stays) deferred.
create function report_commissions_changed() returns trigger
language plpgsql
set enable_seqscan = off
set jit = off
as $$
declare
  w timestamptz;
  f timestamptz;
  deltas report_delta[];
begin
  if not exists (select 1 from changed_new) then return null; end if;
  perform pg_advisory_xact_lock_shared(7262010001);
  select folded_before, folded_at into w, f from report_fold_state;
  if f is null then return null; end if;
  -- Deferred means: pending with approves_at after the last fold (folded_at). A changed entry is
  -- deferred by that same rule, so the next fold finds it due exactly when it would have.
  select array_agg(d) into deltas from (
    select report_commission_delta(o.organization_id, o.affiliate_id, o.program_id, o.currency::text, coalesce(v.occurred_at, o.created_at), o.amount, report_bucket(o.status, o.approves_at), -1) as d
    from changed_old o join changed_new n on n.id = o.id left join conversions v on v.id = o.conversion_id
    where o.created_at < w and not report_deferred(o.status, o.approves_at, f)
      and (o.status, o.amount, o.approves_at, o.affiliate_id, o.program_id, o.currency) is distinct from (n.status, n.amount, n.approves_at, n.affiliate_id, n.program_id, n.currency)
    union all
    select report_commission_delta(n.organization_id, n.affiliate_id, n.program_id, n.currency::text, coalesce(v.occurred_at, n.created_at), n.amount, report_bucket(n.status, n.approves_at), 1)
    from changed_old o join changed_new n on n.id = o.id left join conversions v on v.id = n.conversion_id
    where o.created_at < w and not report_deferred(n.status, n.approves_at, f)
      and (o.status, o.amount, o.approves_at, o.affiliate_id, o.program_id, o.currency) is distinct from (n.status, n.amount, n.approves_at, n.affiliate_id, n.program_id, n.currency)
  ) s;
  if deltas is not null then perform report_apply(deltas); end if;

  delete from report_deferred_commissions d
  using changed_old o join changed_new n on n.id = o.id
  where d.organization_id = o.organization_id and d.commission_id = o.id
    and o.created_at < w and report_deferred(o.status, o.approves_at, f)
    and (o.status, o.amount, o.approves_at, o.affiliate_id, o.program_id, o.currency) is distinct from (n.status, n.amount, n.approves_at, n.affiliate_id, n.program_id, n.currency);

  insert into report_deferred_commissions (organization_id, commission_id, affiliate_id, program_id, currency, period_at, amount, approves_at)
  select n.organization_id, n.id, n.affiliate_id, n.program_id, n.currency::text, coalesce(v.occurred_at, n.created_at), n.amount, n.approves_at
  from changed_old o join changed_new n on n.id = o.id left join conversions v on v.id = n.conversion_id
  where o.created_at < w and report_deferred(n.status, n.approves_at, f)
    and (o.status, o.amount, o.approves_at, o.affiliate_id, o.program_id, o.currency) is distinct from (n.status, n.amount, n.approves_at, n.affiliate_id, n.program_id, n.currency);
  return null;
end
$$;

create trigger report_commissions_changed after update on commissions
  referencing old table as changed_old new table as changed_new
  for each statement execute function report_commissions_changed();
`);
  }
}
