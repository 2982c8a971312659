import { Migration } from '@mikro-orm/migrations';

/**
 * One index per merchant-chosen id instead of two. A conversion's external_id and a customer's
 * customer_id each had a unique (organization_id, <merchant id>), for "once per organization" and
 * the hot writes' ON CONFLICT, and a plain index on the merchant id alone, for the ownership rule's
 * "found only in another organization: 403" (db/owned-row.ts). One unique key with the merchant id
 * first does both: the same uniqueness (a set of columns, whatever their order), the lookup with
 * the organization, and the lookup without it; ON CONFLICT (organization_id, external_id) infers
 * it as it did the old one. Every new conversion and customer then updates one btree fewer, and
 * one whose keys (the merchant's ids) arrive in random order, so the one whose pages are least
 * likely to be in memory (measured in the README's Performance section: with 2 million
 * conversions, the batched conversion statement 882 -> 1 006 calls/s on PostgreSQL alone).
 *
 * Built within the migration's transaction: writes to these two tables wait while each new index
 * is built (3.5 s for 2 million conversions on the 2-core machine of the README's figures; its
 * upgrade note says so).
 */
export class Migration20261231500000_merchant_id_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table conversions add constraint conversions_external_id_key unique (external_id, organization_id);');
    this.addSql('alter table conversions drop constraint conversions_external_id_unique;');
    this.addSql('drop index conversions_external_id_idx;');
    this.addSql('alter table customers add constraint customers_customer_id_key unique (customer_id, organization_id);');
    this.addSql('alter table customers drop constraint customers_customer_id_unique;');
    this.addSql('drop index customers_customer_id_idx;');
  }
}
