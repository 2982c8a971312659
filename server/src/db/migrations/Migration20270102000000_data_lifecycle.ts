import { Migration } from '@mikro-orm/migrations';

/**
 * Data that can be deleted where the domain allows (docs/data-lifecycle.md):
 *
 * - `organizations.click_retention_days`: clicks older than this (and than the organization's
 *   longest click window) that nothing refers to are deleted by a periodic job; those a customer
 *   or a conversion refers to keep only what the ledger needs (IP and user agent cleared).
 * - `affiliates.erased_at`: when a partner's personal details were erased on request.
 * - Indexes on the referencing side of the keys whose referenced rows are deleted: a foreign key's
 *   check on DELETE looks the referencing rows up, and without an index it reads the whole table
 *   once per deleted row. `commissions_conversion_idx` covers every entry with a conversion (the
 *   clawbacks' partial index it replaces covered one type).
 */
export class Migration20270102000000_data_lifecycle extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table organizations add column click_retention_days integer
  constraint organizations_click_retention_days_check check (click_retention_days between 1 and 3650);
alter table affiliates add column erased_at timestamptz;
create index conversions_click_idx on conversions (click_id, organization_id) where click_id is not null;
create index customers_click_idx on customers (click_id, organization_id) where click_id is not null;
create index commissions_conversion_idx on commissions (conversion_id, organization_id) where conversion_id is not null;
drop index commissions_clawbacks_idx;
create index payout_items_payout_idx on payout_items (payout_id, organization_id);`);
  }
}
