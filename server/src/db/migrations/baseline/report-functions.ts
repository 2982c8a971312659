/** The report read model's functions and triggers. */
export const REPORT_FUNCTIONS = `
-- Whether an entry counts as pending at "at" only until its approves_at (commission_status_at): it changes to approved later.
create function report_deferred(status text, approves_at timestamptz, at timestamptz) returns boolean language sql immutable parallel safe
as $$ select commission_status_at(status, approves_at, at) = 'pending' and approves_at is not null $$;

create function report_commission_delta(organization_id uuid, affiliate_id uuid, program_id uuid, currency text, at timestamptz, amount numeric, bucket text, sign integer) returns report_delta language sql immutable as $$
  select row(organization_id, affiliate_id, program_id, currency, at, 0, 0, 0, 0, 0,
    case when bucket = 'pending' then sign * amount else 0 end,
    case when bucket = 'approved' then sign * amount else 0 end,
    case when bucket = 'paid' then sign * amount else 0 end,
    case when bucket = 'reversed' then sign * amount else 0 end,
    case when bucket = 'rejected' then sign * amount else 0 end,
    case when bucket = 'on_hold' then sign * amount else 0 end, sign)::report_delta
$$;

create function report_apply(deltas report_delta[]) returns void language plpgsql as $$
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

create function report_fold(lag interval, span interval) returns timestamptz language plpgsql as $$
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
    select report_commission_delta(k.organization_id, k.affiliate_id, k.program_id, k.currency::text, coalesce(v.occurred_at, k.created_at), k.amount, commission_status_at(k.status, k.approves_at, now()), 1)
    from commissions k left join lateral (select v.occurred_at from conversions v where v.id = k.conversion_id and v.organization_id = k.organization_id) v on true
    where k.created_at >= w_old and k.created_at < w_new
    union all
    -- Listed entries whose hold has ended: from pending to approved.
    select report_commission_delta(organization_id, affiliate_id, program_id, currency, period_at, amount, 'pending', -1)
    from report_deferred_commissions where commission_due('pending', approves_at, now())
    union all
    select report_commission_delta(organization_id, affiliate_id, program_id, currency, period_at, amount, 'approved', 1)
    from report_deferred_commissions where commission_due('pending', approves_at, now())
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
  delete from report_deferred_commissions where commission_due('pending', approves_at, now());

  update report_fold_state set folded_before = w_new, folded_at = now();
  return w_new;
end
$$;

create function report_reset() returns void language plpgsql as $$
begin
  perform pg_advisory_xact_lock(7262010001);
  truncate report_affiliate_totals, report_affiliate_days, report_program_days, report_deferred_commissions;
  update report_fold_state set folded_before = '-infinity', folded_at = null, totals_through = null;
end
$$;

create function report_commissions_changed() returns trigger language plpgsql as $$
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
    select report_commission_delta(o.organization_id, o.affiliate_id, o.program_id, o.currency::text, coalesce(v.occurred_at, o.created_at), o.amount, commission_status_at(o.status, o.approves_at, f), -1) as d
    from changed_old o join changed_new n on n.id = o.id left join lateral (select v.occurred_at from conversions v where v.id = o.conversion_id and v.organization_id = o.organization_id) v on true
    where o.created_at < w
      and (commission_status_at(o.status, o.approves_at, f), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (commission_status_at(n.status, n.approves_at, f), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end)
    union all
    select report_commission_delta(n.organization_id, n.affiliate_id, n.program_id, n.currency::text, coalesce(v.occurred_at, n.created_at), n.amount, commission_status_at(n.status, n.approves_at, f), 1)
    from changed_old o join changed_new n on n.id = o.id left join lateral (select v.occurred_at from conversions v where v.id = n.conversion_id and v.organization_id = n.organization_id) v on true
    where o.created_at < w
      and (commission_status_at(o.status, o.approves_at, f), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (commission_status_at(n.status, n.approves_at, f), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end)
  ) s;
  if deltas is not null then perform report_apply(deltas); end if;

  delete from report_deferred_commissions d
  using changed_old o join changed_new n on n.id = o.id
  where d.organization_id = o.organization_id and d.commission_id = o.id
    and o.created_at < w and report_deferred(o.status, o.approves_at, f)
    and (commission_status_at(o.status, o.approves_at, f), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (commission_status_at(n.status, n.approves_at, f), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end);

  insert into report_deferred_commissions (organization_id, commission_id, affiliate_id, program_id, currency, period_at, amount, approves_at)
  select n.organization_id, n.id, n.affiliate_id, n.program_id, n.currency::text, coalesce(v.occurred_at, n.created_at), n.amount, n.approves_at
  from changed_old o join changed_new n on n.id = o.id left join lateral (select v.occurred_at from conversions v where v.id = n.conversion_id and v.organization_id = n.organization_id) v on true
  where o.created_at < w and report_deferred(n.status, n.approves_at, f)
    and (commission_status_at(o.status, o.approves_at, f), o.amount, o.affiliate_id, o.program_id, o.currency, case when report_deferred(o.status, o.approves_at, f) then o.approves_at end)
      is distinct from (commission_status_at(n.status, n.approves_at, f), n.amount, n.affiliate_id, n.program_id, n.currency, case when report_deferred(n.status, n.approves_at, f) then n.approves_at end);
  return null;
end
$$;

create function report_conversions_changed() returns trigger language plpgsql as $$
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

create function report_revenue_inserted() returns trigger language plpgsql as $$
begin
  insert into report_affiliate_revenue (organization_id, before, affiliate_id, currency, program_id, revenue)
  select n.organization_id, n.before, n.affiliate_id, n.currency, n.program_id, n.revenue
  from totals_new n where n.currency <> ''
  order by 1, 2, 3, 4;
  return null;
end
$$;

create function report_revenue_updated() returns trigger language plpgsql as $$
begin
  update report_affiliate_revenue r set revenue = n.revenue, program_id = n.program_id
  from totals_new n
  where r.organization_id = n.organization_id and r.before = n.before and r.affiliate_id = n.affiliate_id and r.currency = n.currency
    and n.currency <> '' and (r.revenue, r.program_id) is distinct from (n.revenue, n.program_id);
  return null;
end
$$;

create function report_revenue_truncated() returns trigger language plpgsql as $$
begin
  truncate report_affiliate_revenue;
  return null;
end
$$;

create trigger report_commissions_changed after update on commissions
  referencing old table as changed_old new table as changed_new for each statement execute function report_commissions_changed();

create trigger report_conversions_changed after update on conversions
  referencing old table as changed_old new table as changed_new for each statement execute function report_conversions_changed();

create trigger report_revenue_inserted after insert on report_affiliate_totals
  referencing new table as totals_new for each statement execute function report_revenue_inserted();

create trigger report_revenue_truncated after truncate on report_affiliate_totals for each statement execute function report_revenue_truncated();

create trigger report_revenue_updated after update on report_affiliate_totals
  referencing new table as totals_new for each statement execute function report_revenue_updated();
`;
