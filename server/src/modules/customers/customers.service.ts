import type { MikroORM } from '@mikro-orm/postgresql';
import type { Customer } from '../../resources.js';
import { hasClickAttribution, type Attribution, type ClickAttributionInput } from '../../attribution/resolver.js';
import type { AttributionResolver } from '../referrals/attribution-resolver.js';
import { orRepeatOnRefusal } from '../idempotent-repeat.js';
import { BadRequestError } from '../../http/errors.js';
import { iso, isoOrNull } from '../../http/serialize.js';
import {
  findByCustomerId,
  type CustomerRecord,
  type CustomersRepository,
  type CustomerStatus,
} from './customers.repository.js';
import { newRowId } from '../../db/row-ids.js';

export type { CustomerRecord, CustomerStatus } from './customers.repository.js';

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

/**
 * Creates customers once per (organization, customer_id): the unique key decides between
 * concurrent identical requests, which all answer the one row (db/insert-once.ts). Shared by the
 * customers and conversions services.
 */
export class CustomerInserter {
  constructor(private readonly customers: CustomersRepository) {}

  /** The row, and whether this call created it (false: it existed, and is answered as it is). */
  async insertOnce(
    organizationId: string,
    input: { customer_id: string; status: CustomerStatus; email?: string | null; name?: string | null },
    attribution: Attribution,
  ): Promise<{ customer: CustomerRecord; created: boolean }> {
    const now = new Date();
    const { row, deduped } = await this.customers.insertOnce({
      id: newRowId(),
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
    return { customer: row, created: !deduped };
  }
}

/** A customer by the merchant's id for it (customers.repository.ts); on the hot path of every renewal. */
export function findCustomerInOrganization(
  orm: MikroORM,
  organizationId: string,
  customerId: string,
): Promise<CustomerRecord | undefined> {
  return findByCustomerId(orm, organizationId, customerId);
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
    private readonly customers: CustomersRepository,
    private readonly resolver: AttributionResolver,
    private readonly inserter: CustomerInserter,
  ) {}

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
      () => this.resolver.resolveClick(organizationId, input, new Date()),
      async () =>
        repeatWithoutAttribution === 'answer-existing'
          ? this.customers.findByCustomerId(organizationId, input.customer_id)
          : undefined,
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

  /** By the service's UUID or the merchant's customer_id; 403 when only another organization has it. */
  async get(organizationId: string, id: string): Promise<Customer> {
    return toCustomerDto(await this.customers.findOwned(organizationId, id));
  }

  async updateStatus(organizationId: string, id: string, status: CustomerStatus): Promise<Customer> {
    return toCustomerDto(await this.customers.updateOwnedStatus(organizationId, id, status, new Date()));
  }
}
