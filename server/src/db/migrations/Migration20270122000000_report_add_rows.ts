import { Migration } from '@mikro-orm/migrations';

/**
 * `report_add_rows`: puts rows written with a `created_at` in the past into the report read model
 * (baseline/report-functions.ts). An import keeps each row's own dates (a June customer is a June
 * signup), but the fold only folds rows whose created_at is ahead of its watermark
 * (folded_before): a row stamped behind it would never be folded, and the live part (rows from the
 * watermark on) would not read it either. So the writer of such rows calls this in the
 * transaction that inserts them, after the inserts and before any update of them: what each row
 * behind the watermark contributes is added exactly as the fold computes it (the mirror of
 * report_forget_rows, Migration20270104000000_report_forget), pending entries whose hold is still
 * running listed in report_deferred_commissions as the fold lists them. Rows at or after the
 * watermark are left to the fold. It takes the fold's lock until the transaction ends, so the
 * watermark cannot move between this and the commit. Ids not of the organization are ignored.
 */
export class Migration20270122000000_report_add_rows extends Migration {
  override async up(): Promise<void> {
    this
      .addSql(`create function report_add_rows(organization uuid, customer_ids uuid[], conversion_ids uuid[], commission_ids uuid[]) returns void language plpgsql as $$
declare
  w timestamptz;
  f timestamptz;
  deltas report_delta[];
begin
  perform pg_advisory_xact_lock(7262010001);
  select folded_before, folded_at into w, f from report_fold_state;
  if f is null then return; end if;
  select array_agg(d) into deltas from (
    select row(organization_id, affiliate_id, program_id, '', created_at, 0, count(*), 0, 0, 0, 0, 0, 0, 0, 0, 0, count(*))::report_delta as d
    from customers where organization_id = organization and id = any(customer_ids) and created_at < w
    group by organization_id, affiliate_id, program_id, created_at
    union all
    select row(organization_id, affiliate_id, program_id, currency::text, occurred_at, 0, 0, 1, amount, refunded_amount, 0, 0, 0, 0, 0, 0, 1)::report_delta
    from conversions where organization_id = organization and id = any(conversion_ids) and created_at < w
    union all
    select report_commission_delta(k.organization_id, k.affiliate_id, k.program_id, k.currency::text, coalesce(v.occurred_at, k.created_at), k.amount, commission_status_at(k.status, k.approves_at, now()), 1)
    from commissions k left join lateral (select v.occurred_at from conversions v where v.id = k.conversion_id and v.organization_id = k.organization_id) v on true
    where k.organization_id = organization and k.id = any(commission_ids) and k.created_at < w
  ) s;
  insert into report_deferred_commissions (organization_id, commission_id, affiliate_id, program_id, currency, period_at, amount, approves_at)
  select k.organization_id, k.id, k.affiliate_id, k.program_id, k.currency::text, coalesce(v.occurred_at, k.created_at), k.amount, k.approves_at
  from commissions k left join lateral (select v.occurred_at from conversions v where v.id = k.conversion_id and v.organization_id = k.organization_id) v on true
  where k.organization_id = organization and k.id = any(commission_ids) and k.created_at < w and report_deferred(k.status, k.approves_at, now());
  if deltas is not null then perform report_apply(deltas); end if;
end
$$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function report_add_rows(uuid, uuid[], uuid[], uuid[]);`);
  }
}
