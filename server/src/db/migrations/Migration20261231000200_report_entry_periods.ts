import { Migration } from '@mikro-orm/migrations';

/**
 * The fold (report_fold) and the commissions' trigger (report_commissions_changed) of migration
 * 20261227000000_reports find a sale entry's conversion (its occurred_at, the period of the entry)
 * by a lateral lookup of the conversions' primary key (id, organization_id), one per entry, in
 * place of a join. Without table statistics the join was planned as a merge join that walks the
 * whole primary key of conversions: 34 s for one fold step of a day on the 2 million conversions of
 * bench/ledger-seeded.ts (so every step hit its 60 s timeout and the fold never caught up), and a
 * trigger firing for a payout run read every conversion too. A lateral lookup can only be planned
 * as a nested loop of index probes: as many as entries, whatever the statistics say.
 *
 * And the trigger passes over the entries whose change moves nothing in the summaries: same bucket
 * (report_bucket: a pending entry past its approves_at is already counted approved), amount,
 * affiliate, program and currency, and the same place in the deferred list. A payout run changes
 * the stored status of every pending entry it takes (to approved) and their payout_id, neither of
 * which moves a figure: 60 000 entries of bench/ledger-seeded.ts's payout run no longer cost two
 * conversion lookups each.
 */
export class Migration20261231000200_report_entry_periods extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
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

  insert into report_deferred_commissions (organization_id, commission_id, affiliate_id, program_id, currency, period_at, amount, approves_at)
  select k.organization_id, k.id, k.affiliate_id, k.program_id, k.currency::text, coalesce(v.occurred_at, k.created_at), k.amount, k.approves_at
  from commissions k left join lateral (select v.occurred_at from conversions v where v.id = k.conversion_id and v.organization_id = k.organization_id) v on true
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
    from commissions k left join lateral (select v.occurred_at from conversions v where v.id = k.conversion_id and v.organization_id = k.organization_id) v on true
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
  -- Deferred means: pending with approves_at after the last fold (folded_at). A changed entry is
  -- deferred by that same rule, so the next fold finds it due exactly when it would have.
  select array_agg(d) into deltas from (
    select report_commission_delta(o.organization_id, o.affiliate_id, o.program_id, o.currency::text, coalesce(v.occurred_at, o.created_at), o.amount, report_bucket(o.status, o.approves_at), -1) as d
    from changed_old o join changed_new n on n.id = o.id left join lateral (select v.occurred_at from conversions v where v.id = o.conversion_id and v.organization_id = o.organization_id) v on true
    where o.created_at < w and not report_deferred(o.status, o.approves_at, f)
      and (report_bucket(o.status, o.approves_at), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (report_bucket(n.status, n.approves_at), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end)
    union all
    select report_commission_delta(n.organization_id, n.affiliate_id, n.program_id, n.currency::text, coalesce(v.occurred_at, n.created_at), n.amount, report_bucket(n.status, n.approves_at), 1)
    from changed_old o join changed_new n on n.id = o.id left join lateral (select v.occurred_at from conversions v where v.id = n.conversion_id and v.organization_id = n.organization_id) v on true
    where o.created_at < w and not report_deferred(n.status, n.approves_at, f)
      and (report_bucket(o.status, o.approves_at), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (report_bucket(n.status, n.approves_at), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end)
  ) s;
  if deltas is not null then perform report_apply(deltas); end if;

  delete from report_deferred_commissions d
  using changed_old o join changed_new n on n.id = o.id
  where d.organization_id = o.organization_id and d.commission_id = o.id
    and o.created_at < w and report_deferred(o.status, o.approves_at, f)
    and (report_bucket(o.status, o.approves_at), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (report_bucket(n.status, n.approves_at), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end);

  insert into report_deferred_commissions (organization_id, commission_id, affiliate_id, program_id, currency, period_at, amount, approves_at)
  select n.organization_id, n.id, n.affiliate_id, n.program_id, n.currency::text, coalesce(v.occurred_at, n.created_at), n.amount, n.approves_at
  from changed_old o join changed_new n on n.id = o.id left join lateral (select v.occurred_at from conversions v where v.id = n.conversion_id and v.organization_id = n.organization_id) v on true
  where o.created_at < w and report_deferred(n.status, n.approves_at, f)
    and (report_bucket(o.status, o.approves_at), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (report_bucket(n.status, n.approves_at), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end);
  return null;
end
$$;
`);
  }
}
