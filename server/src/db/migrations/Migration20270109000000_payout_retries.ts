import { Migration } from '@mikro-orm/migrations';

/**
 * A failed payout's retry (and, needing no change here: the PayPal and Wise webhooks join the log
 * of received webhooks as `paypal_payouts` and `wise`, since `webhook_events.provider` and
 * `webhook_rejections.provider` are plain text with no check constraint, baseline/tenancy.ts).
 *
 * - `payouts.retried_by_payout_id`: the payout that POST /api/payouts/{id}/retry sent in place of a
 *   failed one (the failed one stays as the record). Set once, only on a failed payout; a
 *   composite foreign key to the new payout of the same organization (Citus co-locates it).
 */
export class Migration20270109000000_payout_retries extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table payouts
  add column retried_by_payout_id uuid,
  add constraint payouts_retried_by_fkey foreign key (retried_by_payout_id, organization_id) references payouts (id, organization_id),
  add constraint payouts_retried_by_check check (retried_by_payout_id is null or (status = 'failed' and retried_by_payout_id <> id))`);
  }
}
