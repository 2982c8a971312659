import { Migration } from '@mikro-orm/migrations';

/**
 * Every conversion recorded before the ledger gets the sale entry its write path now makes with
 * it (modules/commissions: saleEntriesOfInserted), so the ledger starts complete:
 * - a conversion with a commission above zero: `pending`, held from its `occurred_at` by its
 *   program's `hold_days` (`approves_at`; null when the program does not approve by itself), so an
 *   old sale is approved at once, by the same rule as a new one;
 * - a reversed conversion (refunded in full): `reversed`, with the commission it had before its
 *   refunds, kept for the record;
 * - a conversion that earned nothing: no entry.
 * Conversions that have their entry already are left alone, so running it on a database where the
 * service already wrote entries adds none twice.
 *
 * The ledger's amounts follow the conversions' (Migration20261202000000_money_minor_units): a
 * currency's minor unit may have 3 decimals (BHD), so no column fixes 2.
 *
 * Every sale now writes an entry on the hot path, so the entries carry no index they do not need:
 * a sale is found by its conversion through commissions_one_sale_per_conversion already; only
 * clawbacks (found when their sale is rejected) need their own index by conversion.
 */
export class Migration20261226000000_ledger_sale_entries extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table commissions alter column amount type numeric;
alter table payouts alter column amount type numeric;
alter table programs alter column minimum_payout type numeric;

drop index commissions_conversion_idx;
create index commissions_clawbacks_idx on commissions (conversion_id) where type = 'clawback';

insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, customer_id, approves_at, created_at, updated_at)
select gen_random_uuid(), c.organization_id, 'sale',
  case when c.status = 'reversed' then 'reversed' else 'pending' end,
  case when c.status = 'reversed' then coalesce(c.gross_commission_amount, c.commission_amount) else c.commission_amount end,
  c.currency, c.affiliate_id, c.program_id, c.id, c.customer_id,
  case when p.auto_approve then c.occurred_at + make_interval(days => p.hold_days) end,
  c.created_at, now()
from conversions c
join programs p on p.id = c.program_id
where (case when c.status = 'reversed' then coalesce(c.gross_commission_amount, c.commission_amount) else c.commission_amount end) > 0
  and not exists (select 1 from commissions e where e.conversion_id = c.id and e.type = 'sale');
`);
  }
}
