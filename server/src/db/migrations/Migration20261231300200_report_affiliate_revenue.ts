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

-- Updated rows by primary key, written only where the revenue (or the program) differs. Measured on
-- bench/ledger-seeded.ts's database, an update of 40 000 totals rows (20 000 with a currency): 1.15 s
-- with this trigger against 0.5 s without, 0.9 s when no revenue changed; joining the old and new
-- transition tables first, to probe only the changed rows, cost 2.2 s.
create function report_revenue_updated() returns trigger
language plpgsql
set enable_seqscan = off
set jit = off
as $$
begin
  update report_affiliate_revenue r set revenue = n.revenue, program_id = n.program_id
  from totals_new n
  where r.organization_id = n.organization_id and r.before = n.before and r.affiliate_id = n.affiliate_id and r.currency = n.currency
    and n.currency <> '' and (r.revenue, r.program_id) is distinct from (n.revenue, n.program_id);
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
  referencing new table as totals_new for each statement execute function report_revenue_updated();
create trigger report_revenue_truncated after truncate on report_affiliate_totals
  for each statement execute function report_revenue_truncated();

insert into report_affiliate_revenue (organization_id, before, affiliate_id, currency, program_id, revenue)
select organization_id, before, affiliate_id, currency, program_id, revenue
from report_affiliate_totals where currency <> ''
order by 1, 2, 3, 4;
`);
  }
}
