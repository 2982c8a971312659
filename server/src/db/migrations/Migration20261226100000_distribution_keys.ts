import { Migration } from '@mikro-orm/migrations';

/**
 * Keys Citus can shard by `organization_id` (db/distribution.ts lists the tables): Citus requires
 * every primary key, unique key and foreign key of a distributed table to include the
 * distribution column. The tenant tables keyed by `id` alone now have the primary key
 * `(id, organization_id)`, `id` first so that a lookup by id alone (an ownership check answering
 * 403 for another organization's row) still uses it, and no table gains an index; every foreign
 * key between tenant tables names the organization on both sides, which also means a row can only
 * ever point at a row of its own organization. Foreign keys to `organizations` (a reference table)
 * stay as they are. Ids are random UUIDs, unique in practice across organizations.
 */
const KEYED_BY_ID = ['programs', 'affiliates', 'clicks', 'customers', 'conversions', 'integrations', 'payouts', 'commissions'];

/** [table, column, referenced table] of every foreign key between tenant tables. */
const TENANT_FOREIGN_KEYS: [string, string, string][] = [
  ['affiliates', 'program_id', 'programs'],
  ['clicks', 'affiliate_id', 'affiliates'],
  ['clicks', 'program_id', 'programs'],
  ['customers', 'affiliate_id', 'affiliates'],
  ['customers', 'program_id', 'programs'],
  ['customers', 'click_id', 'clicks'],
  ['conversions', 'affiliate_id', 'affiliates'],
  ['conversions', 'program_id', 'programs'],
  ['conversions', 'click_id', 'clicks'],
  ['conversion_refunds', 'conversion_id', 'conversions'],
  ['payouts', 'affiliate_id', 'affiliates'],
  ['payouts', 'program_id', 'programs'],
  ['commissions', 'affiliate_id', 'affiliates'],
  ['commissions', 'program_id', 'programs'],
  ['commissions', 'conversion_id', 'conversions'],
  ['commissions', 'payout_id', 'payouts'],
];

export class Migration20261226100000_distribution_keys extends Migration {
  override async up(): Promise<void> {
    const fk = (table: string, column: string) => `${table}_${column}_fkey`;
    this.addSql(
      [
        ...TENANT_FOREIGN_KEYS.map(([table, column]) => `alter table ${table} drop constraint ${fk(table, column)};`),
        ...KEYED_BY_ID.map((table) => `alter table ${table} drop constraint ${table}_pkey, add constraint ${table}_pkey primary key (id, organization_id);`),
        // A nullable reference (click_id, conversion_id, payout_id) is checked only when set (MATCH SIMPLE).
        ...TENANT_FOREIGN_KEYS.map(
          ([table, column, referenced]) =>
            `alter table ${table} add constraint ${fk(table, column)} foreign key (${column}, organization_id) references ${referenced} (id, organization_id);`,
        ),
        'drop index commissions_one_sale_per_conversion;',
        "create unique index commissions_one_sale_per_conversion on commissions (conversion_id, organization_id) where type = 'sale';",
      ].join('\n'),
    );
  }
}
