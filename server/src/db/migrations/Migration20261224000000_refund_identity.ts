import { Migration } from '@mikro-orm/migrations';

/**
 * Refunds keyed by the refund's identity instead of the channel that reported it
 * (attribution/refunds.ts): `total` for a report of the charge's running total (the API without
 * refund_id; Stripe, Lemon Squeezy and Polar), `refund:<id>` for one identified refund (the API's
 * refund_id; Paddle adjustments, Chargebee refund transactions). Earlier keys named the channel
 * (`api`, `api:<id>`, `stripe:charge:<id>`, `polar:order:<id>`, `paddle:adjustment:<id>`,
 * `chargebee:refund:<id>`, Lemon Squeezy's order id); two running totals of one charge merge into
 * one row, keeping the larger amount. Stored refunded amounts and commissions are left as they
 * were recorded; the next refund of a charge recomputes them under the new rule.
 */
export class Migration20261224000000_refund_identity extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
insert into conversion_refunds (organization_id, conversion_id, refund_key, amount, created_at, updated_at)
select organization_id, conversion_id, new_key, max(amount), min(created_at), max(updated_at)
from (
  select *, case
      when refund_key like 'api:%' then 'refund:' || substr(refund_key, 5)
      when refund_key like 'paddle:adjustment:%' then 'refund:' || substr(refund_key, 19)
      when refund_key like 'chargebee:refund:%' then 'refund:' || substr(refund_key, 18)
      else 'total'
    end as new_key
  from conversion_refunds
  where refund_key <> 'total' and refund_key not like 'refund:%'
) as channel_keyed
group by organization_id, conversion_id, new_key
on conflict (organization_id, conversion_id, refund_key)
do update set amount = greatest(conversion_refunds.amount, excluded.amount), updated_at = excluded.updated_at;
`);
    this.addSql(`delete from conversion_refunds where refund_key <> 'total' and refund_key not like 'refund:%';`);
  }
}
