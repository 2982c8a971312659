import { Migration } from '@mikro-orm/migrations';

/**
 * The entries the fold defers (report_deferred_commissions: still pending, approving themselves
 * later, migration 20261227000000_reports) summed per (program, currency, UTC day of their period,
 * UTC day they approve themselves): `report_deferred_days`. A time series no longer aggregates every
 * deferred entry on each request (600 ms for a year by day on bench/ledger-seeded.ts's database,
 * 37 000 entries): an entry approving itself before today is approved, one approving itself after
 * today is pending, both read from these few rows (a couple per program and day); only the
 * entries approving themselves today are read from the list (by its index on approves_at).
 *
 * Kept by statement triggers on the list (insert and delete are its only changes; transition
 * tables, set-based), in the transaction that changes it: never out of step with it.
 */
export class Migration20261231000100_report_deferred_days extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table report_deferred_days (
  organization_id uuid not null,
  day date not null,
  program_id uuid not null,
  currency text not null,
  approves_on date not null,
  amount numeric not null,
  entries bigint not null,
  constraint report_deferred_days_pkey primary key (organization_id, day, program_id, currency, approves_on)
);

-- Adds (sign 1) or takes out (sign -1) entries of the deferred list; rows left with no entry are
-- deleted. Rows are written in key order, so that two transactions never wait on each other in
-- opposite orders.
create function report_deferred_days_add(rows report_deferred_commissions[], sign int) returns void
language plpgsql
set enable_seqscan = off
set jit = off
as $$
begin
  insert into report_deferred_days as r (organization_id, day, program_id, currency, approves_on, amount, entries)
  select d.organization_id, (d.period_at at time zone 'UTC')::date, d.program_id, d.currency, (d.approves_at at time zone 'UTC')::date, sign * sum(d.amount), sign * count(*)
  from unnest(rows) d
  group by 1, 2, 3, 4, 5
  order by 1, 2, 3, 4, 5
  on conflict (organization_id, day, program_id, currency, approves_on) do update set
    amount = r.amount + excluded.amount, entries = r.entries + excluded.entries;
  if sign < 0 then
    delete from report_deferred_days r
    using (select distinct d.organization_id, (d.period_at at time zone 'UTC')::date as day, d.program_id, d.currency, (d.approves_at at time zone 'UTC')::date as approves_on from unnest(rows) d) k
    where r.organization_id = k.organization_id and r.day = k.day and r.program_id = k.program_id and r.currency = k.currency and r.approves_on = k.approves_on
      and r.entries = 0;
  end if;
end
$$;

create function report_deferred_inserted() returns trigger
language plpgsql
as $$
begin
  perform report_deferred_days_add(array(select row(d.organization_id, d.commission_id, d.affiliate_id, d.program_id, d.currency, d.period_at, d.amount, d.approves_at)::report_deferred_commissions from deferred_new d), 1);
  return null;
end
$$;

create function report_deferred_deleted() returns trigger
language plpgsql
as $$
begin
  perform report_deferred_days_add(array(select row(d.organization_id, d.commission_id, d.affiliate_id, d.program_id, d.currency, d.period_at, d.amount, d.approves_at)::report_deferred_commissions from deferred_old d), -1);
  return null;
end
$$;

create trigger report_deferred_inserted after insert on report_deferred_commissions
  referencing new table as deferred_new for each statement execute function report_deferred_inserted();
create trigger report_deferred_deleted after delete on report_deferred_commissions
  referencing old table as deferred_old for each statement execute function report_deferred_deleted();
-- The list is emptied by report_reset (truncate): so is its summary.
create function report_deferred_truncated() returns trigger
language plpgsql
as $$
begin
  truncate report_deferred_days;
  return null;
end
$$;
create trigger report_deferred_truncated after truncate on report_deferred_commissions
  for each statement execute function report_deferred_truncated();

insert into report_deferred_days (organization_id, day, program_id, currency, approves_on, amount, entries)
select organization_id, (period_at at time zone 'UTC')::date, program_id, currency, (approves_at at time zone 'UTC')::date, sum(amount), count(*)
from report_deferred_commissions group by 1, 2, 3, 4, 5;
`);
  }
}
