import { Migration } from '@mikro-orm/migrations';
import { contributionsOfRows, deltasInsertSql } from '../../modules/reports/report-contributions.js';

/**
 * The reports' read model per organization, written by the application (issue 46, item 3): no
 * trigger, no plpgsql, no watermark, nothing read across organizations.
 *
 * - `report_deltas`: an insert-only log of what rows contribute to the reports
 *   (modules/reports/report-contributions.ts, the rule's one home), written in the statement or
 *   transaction that writes the rows; `due_at` is '-infinity', or a held entry's approves_at for its
 *   scheduled approval. The folder (modules/reports/report-fold.ts) takes an organization's due
 *   rows with DELETE ... RETURNING into the summaries, which keep their shape
 *   (report_affiliate_totals at month boundaries, report_affiliate_days, report_program_days).
 * - `report_totals_through`: per organization, the month boundary up to which its running totals
 *   have rows (the folder's lock for that organization, too).
 * - The revenue ranking reads an index of report_affiliate_totals instead of its shadow table.
 * - The log is vacuumed after every 2 000 rows folded, whatever its size: a report reads the
 *   organization's part of its primary key, and the folded rows' dead entries would slow that read
 *   until a vacuum (a bitmap scan does not mark them dead).
 *
 * Existing deployments keep their summaries (they hold clicks that retention has deleted since),
 * and what the old model had not folded yet becomes deltas: the rows created at or after its
 * watermark, and the held entries it listed as deferred (their scheduled approval), so the reports
 * read the same before and after.
 */
export class Migration20270201000000_report_deltas extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop trigger report_commissions_changed on commissions;
drop trigger report_conversions_changed on conversions;
drop trigger report_revenue_inserted on report_affiliate_totals;
drop trigger report_revenue_updated on report_affiliate_totals;
drop trigger report_revenue_truncated on report_affiliate_totals;

create table report_deltas (
  organization_id uuid not null,
  due_at timestamptz not null,
  id uuid default gen_random_uuid() not null,
  day date not null,
  affiliate_id uuid not null,
  program_id uuid not null,
  currency text not null,
  entries bigint not null,
  clicks bigint not null,
  customers bigint not null,
  conversions bigint not null,
  revenue numeric not null,
  refunded numeric not null,
  pending numeric not null,
  approved numeric not null,
  paid numeric not null,
  reversed numeric not null,
  rejected numeric not null,
  on_hold numeric not null,
  constraint report_deltas_pkey primary key (organization_id, due_at, id),
  constraint report_deltas_membership_fkey foreign key (affiliate_id, program_id, organization_id) references affiliates (id, program_id, organization_id)
) with (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 2000);
create index report_deltas_membership_idx on report_deltas (organization_id, affiliate_id, program_id);

create table report_totals_through (
  organization_id uuid not null,
  through date not null,
  constraint report_totals_through_pkey primary key (organization_id),
  constraint report_totals_through_organization_fkey foreign key (organization_id) references organizations (id)
);

insert into report_totals_through (organization_id, through)
select distinct t.organization_id, s.totals_through from report_affiliate_totals t, report_fold_state s where s.totals_through is not null;`);

    // What the old model had not folded: rows created since its watermark, and its deferred entries.
    const unfolded = (table: string) =>
      `(select * from ${table} where created_at >= (select folded_before from report_fold_state))`;
    this.addSql(
      `${deltasInsertSql([
        ...contributionsOfRows(unfolded),
        `select organization_id, (period_at at time zone 'UTC')::date, approves_at, affiliate_id, program_id, currency,
           0::bigint, 0::bigint, 0::bigint, 0::bigint, 0::numeric, 0::numeric, -amount, amount, 0::numeric, 0::numeric, 0::numeric, 0::numeric
         from report_deferred_commissions`,
      ])};`,
    );

    this.addSql(`drop function report_forget_rows(uuid, uuid[], uuid[], uuid[], uuid[]);
drop function report_add_rows(uuid, uuid[], uuid[], uuid[]);
drop function report_fold(interval, interval);
drop function report_reset();
drop function report_apply(report_delta[]);
drop function report_commission_delta(uuid, uuid, uuid, text, timestamptz, numeric, text, integer);
drop function report_deferred(text, timestamptz, timestamptz);
drop function report_commissions_changed();
drop function report_conversions_changed();
drop function report_revenue_inserted();
drop function report_revenue_updated();
drop function report_revenue_truncated();
drop type report_delta;
drop table report_affiliate_revenue;
drop table report_deferred_commissions;
drop table report_fold_state;

create index report_affiliate_totals_revenue_idx on report_affiliate_totals (organization_id, before, affiliate_id, currency)
  include (program_id, revenue) where currency > '';`);
  }

  override async down(): Promise<void> {
    throw new Error(
      'Migration20270201000000_report_deltas cannot be undone: the trigger read model it replaced is gone',
    );
  }
}
