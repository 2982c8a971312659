import type { MikroORM } from '@mikro-orm/postgresql';
import { InsertBatcher, UnnestInsert, writeBatching } from '../../db/batched-insert.js';
import { kyselyOf, type NewRow, type StoredRow } from '../../db/database.js';
import { insertOnce, type Once } from '../../db/insert-once.js';
import { findOwnedRow, type OwnedTable } from '../../db/owned-row.js';
import { Db } from '../../db/sql.js';
import { CustomerEntity } from './customer.entity.js';
import { batchedEventsOf, withEvents } from '../events/outbox.js';
import { contributionsSql, deltasInsertSql } from '../reports/report-contributions.js';

export type CustomerRecord = StoredRow<'customers'>;
export type CustomerStatus = CustomerRecord['status'];
/** A new customer as the service builds it: its id is chosen before the insert, so the inserted row is found by it. */
export type NewCustomer = NewRow<'customers'> & { id: string };

const CUSTOMERS_BY_MERCHANT_ID: OwnedTable = {
  table: 'customers',
  merchantIdColumn: 'customer_id',
  notFound: 'Customer not found',
};

const INSERT_CUSTOMERS = new UnnestInsert(CustomerEntity, {
  skipConflictsOn: ['organization_id', 'customer_id'],
  orderBy: 'customer_id',
  returning: true,
  // customer.created and what the customers count in the reports ride the batched insert: no extra round trip.
  alsoWrite: (inserted, organization) => [
    batchedEventsOf([['customer.created', inserted]], organization),
    deltasInsertSql([contributionsSql('customers', inserted, 1)]),
  ],
});

/** A customer by the merchant's id for it; on the hot path of every renewal, so one index lookup on MikroORM's kysely. */
export function findByCustomerId(
  orm: MikroORM,
  organizationId: string,
  customerId: string,
): Promise<CustomerRecord | undefined> {
  return kyselyOf(orm)
    .selectFrom('customers')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
}

/**
 * The customers module's only way to the database. Customers are on the hot path: inserts of
 * concurrent requests are stored together (db/batched-insert.ts), each one once per
 * (organization, customer_id) by the idempotency rule (db/insert-once.ts).
 */
export class CustomersRepository {
  private readonly inserts: InsertBatcher<NewCustomer, CustomerRecord | undefined>;

  constructor(private readonly orm: MikroORM) {
    this.inserts = new InsertBatcher((rows) => INSERT_CUSTOMERS.insertedPerRow(this.orm, rows), {
      ...writeBatching(this.orm),
      groupKey: (row) => row.organization_id,
    });
  }

  /** The row this call inserted, or the one its (organization, customer_id) already named (deduped). */
  insertOnce(row: NewCustomer): Promise<Once<CustomerRecord>> {
    return insertOnce(
      'customer',
      () => this.inserts.add(row),
      () => this.findByCustomerId(row.organization_id, row.customer_id),
    );
  }

  findByCustomerId(organizationId: string, customerId: string): Promise<CustomerRecord | undefined> {
    return findByCustomerId(this.orm, organizationId, customerId);
  }

  /** By the service's UUID or the merchant's customer_id, by the ownership rule (db/owned-row.ts). */
  findOwned(organizationId: string, id: string): Promise<CustomerRecord> {
    return findOwnedRow<CustomerRecord>(Db.of(this.orm), CUSTOMERS_BY_MERCHANT_ID, organizationId, id);
  }

  /** The owned customer with its status set (the ownership rule first: 403/404). */
  async updateOwnedStatus(
    organizationId: string,
    id: string,
    status: CustomerStatus,
    at: Date,
  ): Promise<CustomerRecord> {
    const customer = await this.findOwned(organizationId, id);
    const update = kyselyOf(this.orm)
      .updateTable('customers')
      .set({ status, updated_at: at })
      .where('organization_id', '=', organizationId)
      .where('id', '=', customer.id)
      .returningAll();
    const updated = (await withEvents(update, 'customer.updated', organizationId).execute(kyselyOf(this.orm))).rows[0];
    return updated ?? customer;
  }
}
