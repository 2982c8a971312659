import { randomUUID } from 'node:crypto';
import type { InferEntity } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Customer } from '@affiliate-attribution/contract';
import { hasClickAttribution, type Attribution, type AttributionResolver, type ClickAttributionInput } from '../../attribution/resolver.js';
import { Sql } from '../../db/sql.js';
import { CUSTOMERS_BY_MERCHANT_ID, findOwnedRow } from '../../db/owned-row.js';
import { InsertBatcher, UnnestInsert, writeBatching } from '../../db/batched-insert.js';
import { kyselyOf, type NewRow } from '../../db/database.js';
import { orRepeatOnRefusal } from '../idempotent-repeat.js';
import { BadRequestError } from '../../http/errors.js';
import { iso, isoOrNull } from '../../http/serialize.js';
import { CustomerEntity } from './customer.entity.js';

export type CustomerRecord = InferEntity<typeof CustomerEntity>;
export type CustomerStatus = CustomerRecord['status'];

export function toCustomerDto(c: CustomerRecord): Customer {
  return {
    id: c.id,
    customer_id: c.customer_id,
    status: c.status,
    affiliate_id: c.affiliate_id,
    program_id: c.program_id,
    click_id: c.click_id ?? null,
    email: c.email ?? null,
    name: c.name ?? null,
    first_conversion_at: isoOrNull(c.first_conversion_at),
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  };
}

export interface CreateCustomerInput extends ClickAttributionInput {
  customer_id: string;
  status?: CustomerStatus;
  email?: string;
  name?: string;
}

const INSERT_CUSTOMERS = new UnnestInsert(CustomerEntity, {
  skipConflictsOn: ['organization_id', 'customer_id'],
  orderBy: 'customer_id',
  returning: true,
});

/**
 * Creates customers once per (organization, customer_id): the unique key decides between
 * concurrent identical requests, which all answer the one row. Inserts of concurrent requests
 * are stored together (db/batched-insert.ts). Shared by the customers and conversions services.
 */
export class CustomerInserter {
  private readonly inserts: InsertBatcher<NewRow<'customers'> & { id: string }, CustomerRecord | undefined>;

  constructor(private readonly orm: MikroORM) {
    this.inserts = new InsertBatcher((rows) => INSERT_CUSTOMERS.insertedPerRow(this.orm, rows) as Promise<(CustomerRecord | undefined)[]>, writeBatching(this.orm));
  }

  /** The row, and whether this call created it (false: it existed, and is answered as it is). */
  async insertOnce(
    organizationId: string,
    input: { customer_id: string; status: CustomerStatus; email?: string | null; name?: string | null },
    attribution: Attribution,
  ): Promise<{ customer: CustomerRecord; created: boolean }> {
    const now = new Date();
    const inserted = await this.inserts.add({
      id: randomUUID(),
      organization_id: organizationId,
      customer_id: input.customer_id,
      status: input.status,
      affiliate_id: attribution.affiliate_id,
      program_id: attribution.program_id,
      click_id: attribution.click_id,
      email: input.email ?? null,
      name: input.name ?? null,
      created_at: now,
      updated_at: now,
    });
    if (inserted) return { customer: inserted, created: true };
    const existing = await findCustomerInOrganization(this.orm, organizationId, input.customer_id);
    if (!existing) throw new Error('customer insert conflicted but no row was found');
    return { customer: existing, created: false };
  }
}

/** A customer by the merchant's id for it; on the hot path of every renewal, so on MikroORM's kysely. */
export function findCustomerInOrganization(orm: MikroORM, organizationId: string, customerId: string): Promise<CustomerRecord | undefined> {
  return kyselyOf(orm)
    .selectFrom('customers')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('customer_id', '=', customerId)
    .executeTakeFirst() as Promise<CustomerRecord | undefined>;
}

/**
 * What a customer creation whose referral does not resolve answers when the customer exists.
 * `answer-existing` (the API: an authenticated merchant repeating its own request) answers the
 * existing customer, deduped. `refuse` (the public snippet endpoint, which anyone can call with
 * any customer id) answers the referral's 404/410 whether or not the customer exists, so that it
 * never tells a stranger which customer ids exist.
 */
export type RepeatWithoutAttribution = 'answer-existing' | 'refuse';

export class CustomersService {
  constructor(
    private readonly orm: MikroORM,
    private readonly resolver: AttributionResolver,
    private readonly inserter: CustomerInserter,
  ) {}

  private sql(): Sql {
    return Sql.of(this.orm);
  }

  /**
   * Resolve, then insert once (the unique key decides between concurrent repeats). Under
   * `answer-existing` a repeat answers the existing customer even when its referral would no
   * longer resolve now (see RepeatWithoutAttribution).
   */
  async create(
    organizationId: string,
    input: CreateCustomerInput,
    repeatWithoutAttribution: RepeatWithoutAttribution = 'answer-existing',
  ): Promise<{ customer: Customer; deduped: boolean }> {
    if (!hasClickAttribution(input)) {
      throw new BadRequestError('cookie_id: one of cookie_id, ref or click_id is required');
    }
    const resolved = await orRepeatOnRefusal(
      () => this.resolver.resolveClick(kyselyOf(this.orm), organizationId, input, new Date()),
      async () => (repeatWithoutAttribution === 'answer-existing' ? findCustomerInOrganization(this.orm, organizationId, input.customer_id) : undefined),
    );
    if ('repeat' in resolved) return { customer: toCustomerDto(resolved.repeat), deduped: true };
    const attribution: Attribution = resolved.done;
    const { customer, created } = await this.inserter.insertOnce(
      organizationId,
      { customer_id: input.customer_id, status: input.status ?? 'trial', email: input.email, name: input.name },
      attribution,
    );
    return { customer: toCustomerDto(customer), deduped: !created };
  }

  async get(organizationId: string, id: string): Promise<Customer> {
    return toCustomerDto(await this.findOwned(this.sql(), organizationId, id));
  }

  async updateStatus(organizationId: string, id: string, status: CustomerStatus): Promise<Customer> {
    const sql = this.sql();
    const customer = await this.findOwned(sql, organizationId, id);
    const updated = await sql.one<CustomerRecord>('update customers set status = ?, updated_at = ? where id = ? returning *', [
      status,
      new Date(),
      customer.id,
    ]);
    return toCustomerDto(updated ?? customer);
  }

  /** By the service's UUID or the merchant's customer_id; 403 when only another organization has it. */
  private findOwned(sql: Sql, organizationId: string, id: string): Promise<CustomerRecord> {
    return findOwnedRow<CustomerRecord>(sql, CUSTOMERS_BY_MERCHANT_ID, organizationId, id);
  }
}
