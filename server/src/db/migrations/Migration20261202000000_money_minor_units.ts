import { Migration } from '@mikro-orm/migrations';

/**
 * Commissions are rounded to their currency's minor unit (ISO 4217: 0 decimals for JPY, 3 for
 * BHD), so their columns no longer fix 2 decimals. Dropping a numeric column's precision and scale
 * changes no stored value and rewrites no row.
 */
export class Migration20261202000000_money_minor_units extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table conversions
  alter column commission_amount type numeric,
  alter column gross_commission_amount type numeric;
`);
  }
}
