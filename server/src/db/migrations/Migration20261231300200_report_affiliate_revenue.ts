import { Migration } from '@mikro-orm/migrations';

/**
 * The affiliates report ranks (affiliate, currency) keys on revenue first (reports.statements.ts
 * affiliatesStatement): the revenue of the keys that carry a currency at two month boundaries of
 * report_affiliate_totals, 20 000 rows each on bench/ledger-seeded.ts's database. Those rows are
 * wide (sixteen figures) and share their pages with the clicks' and customers' rows: reading one
 * boundary's 20 000 touched its ~1 900 pages, which a small shared_buffers (128 MB here) kept
 * evicting (2 400 pages read per boundary and request, 90 to 300 ms).
 *
 * `report_affiliate_revenue` keeps, per organization, month boundary, affiliate and currency, only
 * the running revenue of the rows with a currency: a tenth of the pages. It mirrors
 * report_affiliate_totals through statement triggers on it (insert, update, truncate: the fold,
 * the triggers of migration 20261227000000_reports and report_reset change it, nothing deletes
 * from it), in the same transaction, so never out of step; the fold itself is unchanged.
 */
export class Migration20261231300200_report_affiliate_revenue extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table report_affiliate_revenue (
  organization_id uuid not null,
  before date not null,
  affiliate_id uuid not null,
  currency text not null,
  program_id uuid not null,
  revenue numeric not null,
  constraint report_affiliate_revenue_pkey primary key (organization_id, before, affiliate_id, currency)
);

create function report_revenue_inserted() returns trigger
language plpgsql
as $$
begin
  insert into report_affiliate_revenue (organization_id, before, affiliate_id, currency, program_id, revenue)
  select n.organization_id, n.before, n.affiliate_id, n.currency, n.program_id, n.revenue
  from totals_new n where n.currency <> ''
  order by 1, 2, 3, 4;
  return null;
end
$$;

-- Updated rows by primary key, one lookup each (a lateral lookup: never a join planned over the table).
create function report_revenue_updated() returns trigger
language plpgsql
set enable_seqscan = off
set jit = off
as $$
begin
  update report_affiliate_revenue r set revenue = x.revenue, program_id = x.program_id
  from (
    select n.organization_id, n.before, n.affiliate_id, n.currency, n.program_id, n.revenue
    from totals_old o join totals_new n
      on n.organization_id = o.organization_id and n.before = o.before and n.affiliate_id = o.affiliate_id and n.currency = o.currency
    where n.currency <> '' and (n.revenue, n.program_id) is distinct from (o.revenue, o.program_id)
  ) x
  where r.organization_id = x.organization_id and r.before = x.before and r.affiliate_id = x.affiliate_id and r.currency = x.currency;
  return null;
end
$$;

create function report_revenue_truncated() returns trigger
language plpgsql
as $$
begin
  truncate report_affiliate_revenue;
  return null;
end
$$;

create trigger report_revenue_inserted after insert on report_affiliate_totals
  referencing new table as totals_new for each statement execute function report_revenue_inserted();
create trigger report_revenue_updated after update on report_affiliate_totals
  referencing old table as totals_old new table as totals_new for each statement execute function report_revenue_updated();
create trigger report_revenue_truncated after truncate on report_affiliate_totals
  for each statement execute function report_revenue_truncated();

insert into report_affiliate_revenue (organization_id, before, affiliate_id, currency, program_id, revenue)
select organization_id, before, affiliate_id, currency, program_id, revenue
from report_affiliate_totals where currency <> ''
order by 1, 2, 3, 4;
`);
  }
}
