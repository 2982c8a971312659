import { Migration } from '@mikro-orm/migrations';

/**
 * `report_forget_rows`: takes rows that are about to be deleted out of the report read model
 * (baseline/report-functions.ts), for deletions that must not be counted any more: an import
 * undone, later a merchant's test data. Click retention does not call it (the reports keep
 * counting deleted clicks), nor does an organization's deletion (its summaries go with it).
 *
 * The read model has no delete triggers: a row is folded once its created_at is behind the
 * watermark (folded_before), and from then on the summaries hold what it contributed as it is now
 * (the update triggers keep them so). So what a folded row contributed is read off the row itself,
 * exactly as the fold and the triggers compute it, and subtracted with the same report_apply:
 * - a click: one click at its occurred_at; a customer: one customer at its created_at;
 * - a conversion: one conversion, its amount and refunded_amount, at its occurred_at;
 * - an entry: its amount in the bucket of its status at the last fold (commission_status_at at
 *   folded_at, as report_commissions_changed reads it), at its conversion's occurred_at or its own
 *   created_at; and out of report_deferred_commissions.
 * Rows not yet folded contributed nothing. Summary rows left at zero in every figure for the keys it
 * touched are deleted: a missing row reads as zero, no zero row is left referring to an affiliate
 * deleted next, and the reports read exactly as if the rows had never been written.
 *
 * It takes the fold's lock (exclusive, until the caller's transaction ends), so no fold can fold
 * the rows, or move the watermark, between this subtraction and their deletion. Call it in the
 * transaction that deletes the rows, before the deletes (an entry's period is its conversion's
 * occurred_at). Ids not of the organization are ignored.
 */
export class Migration20270104000000_report_forget extends Migration {
  override async up(): Promise<void> {
    this
      .addSql(`create function report_forget_rows(organization uuid, click_ids uuid[], customer_ids uuid[], conversion_ids uuid[], commission_ids uuid[]) returns void language plpgsql as $$
declare
  w timestamptz;
  f timestamptz;
  deltas report_delta[];
begin
  perform pg_advisory_xact_lock(7262010001);
  select folded_before, folded_at into w, f from report_fold_state;
  if f is null then return; end if;
  select array_agg(d) into deltas from (
    select row(organization_id, affiliate_id, program_id, '', occurred_at, -count(*), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -count(*))::report_delta as d
    from clicks where organization_id = organization and id = any(click_ids) and created_at < w
    group by organization_id, affiliate_id, program_id, occurred_at
    union all
    select row(organization_id, affiliate_id, program_id, '', created_at, 0, -count(*), 0, 0, 0, 0, 0, 0, 0, 0, 0, -count(*))::report_delta
    from customers where organization_id = organization and id = any(customer_ids) and created_at < w
    group by organization_id, affiliate_id, program_id, created_at
    union all
    select row(organization_id, affiliate_id, program_id, currency::text, occurred_at, 0, 0, -1, -amount, -refunded_amount, 0, 0, 0, 0, 0, 0, -1)::report_delta
    from conversions where organization_id = organization and id = any(conversion_ids) and created_at < w
    union all
    select report_commission_delta(k.organization_id, k.affiliate_id, k.program_id, k.currency::text, coalesce(v.occurred_at, k.created_at), k.amount, commission_status_at(k.status, k.approves_at, f), -1)
    from commissions k left join lateral (select v.occurred_at from conversions v where v.id = k.conversion_id and v.organization_id = k.organization_id) v on true
    where k.organization_id = organization and k.id = any(commission_ids) and k.created_at < w
  ) s;
  delete from report_deferred_commissions where organization_id = organization and commission_id = any(commission_ids);
  if deltas is null then return; end if;
  perform report_apply(deltas);

  -- The summary rows of the keys touched that are now zero in every figure.
  with touched as (
    select distinct d.affiliate_id, d.currency from unnest(deltas) d
  ), gone as (
    delete from report_affiliate_totals t using touched k
    where t.organization_id = organization and t.affiliate_id = k.affiliate_id and t.currency = k.currency
      and (t.entries, t.clicks, t.customers, t.conversions) = (0, 0, 0, 0)
      and (t.revenue, t.refunded, t.pending, t.approved, t.paid, t.reversed, t.rejected, t.on_hold) = (0, 0, 0, 0, 0, 0, 0, 0)
    returning t.before, t.affiliate_id, t.currency
  )
  delete from report_affiliate_revenue r using gone g
  where r.organization_id = organization and r.before = g.before and r.affiliate_id = g.affiliate_id and r.currency = g.currency;

  delete from report_affiliate_days t using (select distinct d.affiliate_id, d.currency, (d.at at time zone 'UTC')::date as day from unnest(deltas) d) k
  where t.organization_id = organization and t.day = k.day and t.affiliate_id = k.affiliate_id and t.currency = k.currency
    and (t.entries, t.clicks, t.customers, t.conversions) = (0, 0, 0, 0)
    and (t.revenue, t.refunded, t.pending, t.approved, t.paid, t.reversed, t.rejected, t.on_hold) = (0, 0, 0, 0, 0, 0, 0, 0);

  delete from report_program_days t using (select distinct d.program_id, d.currency, (d.at at time zone 'UTC')::date as day from unnest(deltas) d) k
  where t.organization_id = organization and t.day = k.day and t.program_id = k.program_id and t.currency = k.currency
    and (t.clicks, t.customers, t.conversions) = (0, 0, 0)
    and (t.revenue, t.refunded, t.pending, t.approved, t.paid, t.reversed, t.rejected, t.on_hold) = (0, 0, 0, 0, 0, 0, 0, 0);
end
$$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function report_forget_rows(uuid, uuid[], uuid[], uuid[], uuid[]);`);
  }
}
