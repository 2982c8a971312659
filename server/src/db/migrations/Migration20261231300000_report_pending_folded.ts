import { Migration } from '@mikro-orm/migrations';

/**
 * The entries still in their hold (pending, approving themselves at approves_at) are folded into
 * the summaries as `pending`, like any other entry; the deferred list (report_deferred_commissions)
 * now only names them, so that the next fold past their approves_at moves them from pending to
 * approved (and the trigger on commissions knows which bucket a changed one is counted in). A
 * report corrects live only the entries of the list whose approves_at has passed since the last
 * fold (every 10 s: a handful), found by the list's index on approves_at: pending minus their
 * amount, approved plus it.
 *
 * Before, the list's entries were left out of the summaries and read one by one by every report
 * whose period held them: 35 000 entries for a rolling 30 days on bench/ledger-seeded.ts's database
 * (every sale of the last 30 days of a program holding them 30 days), rows the affiliates report
 * also had to rank. report_deferred_days (their sums per day, for the time series) has no reader
 * left and goes.
 *
 * Rules, as before: an entry is in the list when it is folded (or changed after being folded)
 * while pending with approves_at after the fold's time; report_folded_bucket says where a folded
 * entry is counted: `pending` while in the list, else report_bucket. The list's entries already
 * here are added to the summaries as pending, under the fold's lock.
 */
export class Migration20261231300000_report_pending_folded extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
-- Where a folded commission is counted, given the time of the last fold (folded_at): pending
-- while it approves itself later (it is in the deferred list), else its stored bucket.
create function report_folded_bucket(status text, approves_at timestamptz, folded_at timestamptz) returns text
language sql immutable parallel safe
as $$ select case when report_deferred(status, approves_at, folded_at) then 'pending' else report_bucket(status, approves_at) end $$;

create or replace function report_fold(lag interval, span interval) returns timestamptz
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
    -- Every entry, those in their hold as pending (listed below).
    select report_commission_delta(k.organization_id, k.affiliate_id, k.program_id, k.currency::text, coalesce(v.occurred_at, k.created_at), k.amount, report_folded_bucket(k.status, k.approves_at, now()), 1)
    from commissions k left join lateral (select v.occurred_at from conversions v where v.id = k.conversion_id and v.organization_id = k.organization_id) v on true
    where k.created_at >= w_old and k.created_at < w_new
    union all
    -- Listed entries whose hold has ended: from pending to approved.
    select report_commission_delta(organization_id, affiliate_id, program_id, currency, period_at, amount, 'pending', -1)
    from report_deferred_commissions where approves_at <= now()
    union all
    select report_commission_delta(organization_id, affiliate_id, program_id, currency, period_at, amount, 'approved', 1)
    from report_deferred_commissions where approves_at <= now()
  ) s;

  insert into report_deferred_commissions (organization_id, commission_id, affiliate_id, program_id, currency, period_at, amount, approves_at)
  select k.organization_id, k.id, k.affiliate_id, k.program_id, k.currency::text, coalesce(v.occurred_at, k.created_at), k.amount, k.approves_at
  from commissions k left join lateral (select v.occurred_at from conversions v where v.id = k.conversion_id and v.organization_id = k.organization_id) v on true
  where k.created_at >= w_old and k.created_at < w_new and report_deferred(k.status, k.approves_at, now());

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

-- A folded commission that changes (approve, reject, a payout, a refund) moves from the bucket it
-- is counted in (report_folded_bucket at the last fold) to its new one; the deferred list follows.
create or replace function report_commissions_changed() returns trigger
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
  -- In the list means: pending with approves_at after the last fold (folded_at). A changed entry
  -- is listed by that same rule, so the next fold finds it due exactly when it would have.
  select array_agg(d) into deltas from (
    select report_commission_delta(o.organization_id, o.affiliate_id, o.program_id, o.currency::text, coalesce(v.occurred_at, o.created_at), o.amount, report_folded_bucket(o.status, o.approves_at, f), -1) as d
    from changed_old o join changed_new n on n.id = o.id left join lateral (select v.occurred_at from conversions v where v.id = o.conversion_id and v.organization_id = o.organization_id) v on true
    where o.created_at < w
      and (report_folded_bucket(o.status, o.approves_at, f), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (report_folded_bucket(n.status, n.approves_at, f), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end)
    union all
    select report_commission_delta(n.organization_id, n.affiliate_id, n.program_id, n.currency::text, coalesce(v.occurred_at, n.created_at), n.amount, report_folded_bucket(n.status, n.approves_at, f), 1)
    from changed_old o join changed_new n on n.id = o.id left join lateral (select v.occurred_at from conversions v where v.id = n.conversion_id and v.organization_id = n.organization_id) v on true
    where o.created_at < w
      and (report_folded_bucket(o.status, o.approves_at, f), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (report_folded_bucket(n.status, n.approves_at, f), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end)
  ) s;
  if deltas is not null then perform report_apply(deltas); end if;

  delete from report_deferred_commissions d
  using changed_old o join changed_new n on n.id = o.id
  where d.organization_id = o.organization_id and d.commission_id = o.id
    and o.created_at < w and report_deferred(o.status, o.approves_at, f)
    and (report_folded_bucket(o.status, o.approves_at, f), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (report_folded_bucket(n.status, n.approves_at, f), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end);

  insert into report_deferred_commissions (organization_id, commission_id, affiliate_id, program_id, currency, period_at, amount, approves_at)
  select n.organization_id, n.id, n.affiliate_id, n.program_id, n.currency::text, coalesce(v.occurred_at, n.created_at), n.amount, n.approves_at
  from changed_old o join changed_new n on n.id = o.id left join lateral (select v.occurred_at from conversions v where v.id = n.conversion_id and v.organization_id = n.organization_id) v on true
  where o.created_at < w and report_deferred(n.status, n.approves_at, f)
    and (report_folded_bucket(o.status, o.approves_at, f), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (report_folded_bucket(n.status, n.approves_at, f), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end);
  return null;
end
$$;

-- The entries listed today join the summaries as pending.
do $$
begin
  perform pg_advisory_xact_lock(7262010001);
  perform report_apply(array(
    select report_commission_delta(organization_id, affiliate_id, program_id, currency, period_at, amount, 'pending', 1)
    from report_deferred_commissions));
end
$$;

drop trigger report_deferred_inserted on report_deferred_commissions;
drop trigger report_deferred_deleted on report_deferred_commissions;
drop trigger report_deferred_truncated on report_deferred_commissions;
drop function report_deferred_inserted();
drop function report_deferred_deleted();
drop function report_deferred_truncated();
drop function report_deferred_days_add(report_deferred_commissions[], int);
drop table report_deferred_days;
`);
  }
}
