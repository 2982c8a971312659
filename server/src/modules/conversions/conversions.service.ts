import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import type { InferEntity } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Conversion } from '@affiliate-attribution/contract';
import { computeCommission } from '../../attribution/commission.js';
import {
  assertIdentifiedWithinAmount,
  assertRefundAmount,
  refundAmount,
  refundOutcome,
  reportKey,
  withReport,
  type RecordedRefund,
  type RefundIdentity,
  type RefundMeasure,
} from '../../attribution/refunds.js';
import { assertWholeMinorUnits } from '../../attribution/money.js';
import type { ProgramRule } from '../../attribution/cache.js';
import { resolveConversionKind, type ConversionKind, type FirstChargeByCustomerPolicy } from '../../attribution/kind.js';
import { resolveOccurredAt } from '../../attribution/occurred-at.js';
import { hasClickAttribution, type AttributionResolver, type Attribution, type ClickAttributionInput } from '../../attribution/resolver.js';
import { isPastCommissionWindow } from '../../attribution/windows.js';
import { Sql } from '../../db/sql.js';
import { LRUCache } from 'lru-cache';
import { CONVERSIONS_BY_MERCHANT_ID, findOwnedRow } from '../../db/owned-row.js';
import { InsertBatcher, writeBatching } from '../../db/batched-insert.js';
import { AttributionNotFoundError, BadRequestError, NotFoundError, ServiceUnavailableError } from '../../http/errors.js';
import { orRepeatOnRefusal } from '../idempotent-repeat.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { decimalToNumber, iso, isoOrNull } from '../../http/serialize.js';
import { findCustomerInOrganization, type CustomerInserter, type CustomerRecord, type CustomerStatus } from '../customers/customers.service.js';
import type { ConversionEntity } from './conversion.entity.js';
import { GuardedConversionWrites, INSERT_CONVERSIONS, type GuardedResult, type GuardedWrite, type NewConversion } from './conversion-statements.js';

export type ConversionRecord = InferEntity<typeof ConversionEntity>;

export function toConversionDto(c: ConversionRecord): Conversion {
  return {
    id: c.id,
    external_id: c.external_id,
    amount: decimalToNumber(c.amount),
    currency: c.currency,
    kind: c.kind,
    commission_amount: decimalToNumber(c.commission_amount),
    status: c.status ?? 'approved',
    refunded_amount: decimalToNumber(c.refunded_amount ?? '0'),
    reversed_at: isoOrNull(c.reversed_at),
    customer_id: c.customer_id ?? null,
    affiliate_id: c.affiliate_id,
    program_id: c.program_id,
    click_id: c.click_id ?? null,
    occurred_at: iso(c.occurred_at),
    created_at: iso(c.created_at),
  };
}

export interface CreateConversionInput extends ClickAttributionInput {
  external_id: string;
  amount: number | string;
  currency?: string;
  customer_id?: string;
  kind?: ConversionKind;
  occurred_at?: string;
  /** The channel's policy for a customer's first charge by customer alone (attribution/kind.ts); the API's by default. */
  firstChargeByCustomer?: FirstChargeByCustomerPolicy;
}

export interface RefundInput {
  /** How much: the whole charge, a part of it, or an amount in major units (refunds.ts). */
  measure: RefundMeasure;
  /** The refund's own id (the provider's refund id, or the merchant's refund_id); undefined: the charge's running total. */
  refundId: RefundIdentity;
}

export interface ConversionListQuery {
  limit?: number;
  cursor?: string;
  customer_id?: string;
  affiliate_id?: string;
  program_id?: string;
  from?: string;
  to?: string;
}

/** A few re-decisions cover any realistic contention: each one follows another charge's success. */
const MAX_OPTIMISTIC_ATTEMPTS = 20;

/** row_to_json gives numbers for numeric columns; keep them as the exact decimal text the rest expects. */
function parseConversionJson(row: ConversionRecord): ConversionRecord {
  return {
    ...row,
    amount: String(row.amount),
    commission_amount: String(row.commission_amount),
  } as ConversionRecord;
}

/** A paid conversion activates a trial or canceled customer; past the window it caps them; capped stays capped. */
export function nextCustomerStatus(current: CustomerStatus, amount: number, pastCommissionWindow: boolean): CustomerStatus {
  if (pastCommissionWindow) return 'capped';
  if (amount > 0 && (current === 'trial' || current === 'canceled')) return 'active';
  return current;
}

/** The charge's currency (the program's unless given), its amount checked against its minor unit. */
function chargeCurrency(input: CreateConversionInput, program: ProgramRule): string {
  const currency = (input.currency ?? program.currency).toUpperCase();
  assertWholeMinorUnits('amount', input.amount, currency);
  return currency;
}

export class ConversionsService {
  /** Conversions by click of concurrent requests, stored together (db/batched-insert.ts). */
  private readonly insertsByClick: InsertBatcher<NewConversion, ConversionRecord | undefined>;
  /**
   * Customers as this instance last wrote or read them, by `organization:customer_id`: a renewal
   * decides on this copy and skips reading the customer. Safe when stale (another instance, a
   * status change, a webhook): the guarded write checks first_conversion_at and status in
   * PostgreSQL, and on a mismatch the entry is dropped and the decision made again on a fresh read.
   * The other fields (attribution) never change once a customer exists.
   */
  private readonly customerStates = new LRUCache<string, CustomerRecord>({ max: 10_000 });
  /** Guarded writes by customer of concurrent requests, one statement for all (GuardedConversionWrites). */
  private readonly guardedWrites: InsertBatcher<GuardedWrite, GuardedResult>;

  constructor(
    private readonly orm: MikroORM,
    private readonly resolver: AttributionResolver,
    private readonly customers: CustomerInserter,
  ) {
    this.insertsByClick = new InsertBatcher(
      (rows) => INSERT_CONVERSIONS.insertedPerRow(this.orm, rows) as Promise<(ConversionRecord | undefined)[]>,
      writeBatching(this.orm),
    );
    const guarded = new GuardedConversionWrites();
    this.guardedWrites = new InsertBatcher((writes) => guarded.run(this.orm, writes), {
      ...writeBatching(this.orm),
      exclusiveKey: (write) => write.customer.id,
    });
  }

  private sql(): Sql {
    return Sql.of(this.orm);
  }

  /**
   * Records a charge once per (organization, external_id), in as few round trips as the rules
   * allow. The rules themselves are the pure functions of attribution/ (kind, windows,
   * commission, status); this method only gathers their inputs and writes their outcome:
   * - by click alone: resolve (cached), then one INSERT ... ON CONFLICT;
   * - with a customer: read it (or take this instance's copy, customerStates), decide, then one
   *   statement (WRITE_FOR_CUSTOMERS, batched) that writes only if the customer is still in the state the
   *   decision was made on, else read it and decide again.
   * A repeat of an earlier request returns the existing conversion (deduped), even when the same
   * request would no longer be valid now (a click window has passed since, say).
   */
  async create(organizationId: string, input: CreateConversionInput): Promise<{ conversion: Conversion; deduped: boolean }> {
    const occurredAt = resolveOccurredAt(input.occurred_at);
    const byClick = hasClickAttribution(input);
    if (!input.customer_id && !byClick) {
      throw new BadRequestError('customer_id: one of customer_id, cookie_id, ref or click_id is required');
    }
    const sql = this.sql();
    const created = await orRepeatOnRefusal(
      async () => {
        for (let attempt = 0; attempt < MAX_OPTIMISTIC_ATTEMPTS; attempt++) {
          const outcome = input.customer_id
            ? await this.createForCustomer(sql, organizationId, input, input.customer_id, byClick, occurredAt, attempt === 0)
            : await this.createByClick(sql, organizationId, input, occurredAt);
          if (outcome === 'customer-changed') continue;
          if (outcome) return { conversion: toConversionDto(outcome), deduped: false };
          const raced = await this.findByExternalId(sql, organizationId, input.external_id);
          if (!raced) throw new Error('conversion insert conflicted but no row was found');
          return { conversion: toConversionDto(raced), deduped: true };
        }
        throw new ServiceUnavailableError('The customer is changing too fast; retry');
      },
      () => this.findByExternalId(sql, organizationId, input.external_id),
    );
    return 'repeat' in created ? { conversion: toConversionDto(created.repeat), deduped: true } : created.done;
  }

  /** undefined: the external_id exists already. */
  private async createByClick(sql: Sql, organizationId: string, input: CreateConversionInput, occurredAt: Date): Promise<ConversionRecord | undefined> {
    const attribution = await this.resolver.resolveClick(organizationId, input, occurredAt);
    const kind = resolveConversionKind({ requested: input.kind, hasCustomer: false, isFirstConversion: true, byCustomerIdOnly: false });
    const program = await this.resolver.programRule(attribution.program_id);
    const currency = chargeCurrency(input, program);
    return this.insertsByClick.add(
      this.conversionValues(organizationId, input, currency, kind, computeCommission(program, input.amount, currency), null, attribution, occurredAt),
    );
  }

  private async createForCustomer(
    sql: Sql,
    organizationId: string,
    input: CreateConversionInput,
    customerId: string,
    byClick: boolean,
    occurredAt: Date,
    mayUseCachedCustomer: boolean,
  ): Promise<ConversionRecord | undefined | 'customer-changed'> {
    const stateKey = `${organizationId}:${customerId}`;
    let customer = (mayUseCachedCustomer ? this.customerStates.get(stateKey) : undefined) ?? (await findCustomerInOrganization(this.orm, organizationId, customerId));
    if (!customer) {
      if (!byClick) throw new AttributionNotFoundError();
      const fromClick = await this.resolver.resolveClick(organizationId, input, occurredAt);
      // The charge is checked before the customer is created: a refused request writes nothing.
      chargeCurrency(input, await this.resolver.programRule(fromClick.program_id));
      ({ customer } = await this.customers.insertOnce(organizationId, { customer_id: customerId, status: 'active' }, fromClick));
    }
    const kind = resolveConversionKind({
      requested: input.kind,
      hasCustomer: true,
      isFirstConversion: customer.first_conversion_at == null,
      byCustomerIdOnly: !byClick,
      firstChargeByCustomer: input.firstChargeByCustomer,
    });
    const program = await this.resolver.programRule(customer.program_id);
    const observedFirst = customer.first_conversion_at == null ? null : new Date(customer.first_conversion_at);
    const firstConversionAt = observedFirst && observedFirst < occurredAt ? observedFirst : occurredAt;
    const pastWindow = isPastCommissionWindow(firstConversionAt, program.commission_window_months, occurredAt);
    const currency = chargeCurrency(input, program);
    const commission = computeCommission(program, pastWindow ? 0 : input.amount, currency);
    const attribution = { affiliate_id: customer.affiliate_id, program_id: customer.program_id, click_id: customer.click_id ?? null };
    const nextStatus = nextCustomerStatus(customer.status, Number(input.amount), pastWindow);
    const row = await this.guardedWrites.add({
      customer: {
        id: customer.id,
        observedFirstConversionAt: observedFirst,
        observedStatus: customer.status,
        nextFirstConversionAt: firstConversionAt,
        nextStatus,
      },
      conversion: this.conversionValues(organizationId, input, currency, kind, commission, customer.customer_id, attribution, occurredAt),
    });
    if (!row.guarded) {
      this.customerStates.delete(stateKey);
      return 'customer-changed';
    }
    // The customer as it is now: updated by this write if the conversion was inserted, else as it was.
    this.customerStates.set(stateKey, row.conversion ? { ...customer, first_conversion_at: firstConversionAt, status: nextStatus } : customer);
    return row.conversion ? parseConversionJson(row.conversion) : undefined;
  }

  private conversionValues(
    organizationId: string,
    input: CreateConversionInput,
    currency: string,
    kind: ConversionKind,
    commission: string,
    customerId: string | null,
    attribution: Attribution,
    occurredAt: Date,
  ): NewConversion {
    return {
      id: randomUUID(),
      organization_id: organizationId,
      external_id: input.external_id,
      amount: String(input.amount),
      currency,
      kind,
      commission_amount: commission,
      customer_id: customerId,
      affiliate_id: attribution.affiliate_id,
      program_id: attribution.program_id,
      click_id: attribution.click_id,
      occurred_at: occurredAt,
      created_at: new Date(),
    };
  }

  /**
   * Records a refund of the charge (by UUID or external_id), by the rules of attribution/refunds.ts,
   * the same for the API and every provider: each report keeps the largest amount reported under
   * its key (a repeat changes nothing), the refunded amount is the larger of the running total and
   * the identified refunds' sum, and the commission follows. `deduped` is true when nothing changed.
   */
  async refund(organizationId: string, id: string, input: RefundInput): Promise<{ conversion: Conversion; deduped: boolean }> {
    const target = await this.findOwned(this.sql(), organizationId, id);
    const amount = refundAmount(input.measure, target);
    assertRefundAmount(amount, target);
    const key = reportKey(input.measure, input.refundId);
    return this.sql().transaction(async (sql) => {
      // Locked: concurrent refunds of one charge are decided one after the other.
      const conversion = await sql.one<ConversionRecord>('select * from conversions where id = ? for update', [target.id]);
      if (!conversion) throw new NotFoundError('Conversion not found');
      const recorded = await sql.rows<RecordedRefund>(
        'select refund_key as key, amount::text as amount from conversion_refunds where organization_id = ? and conversion_id = ?',
        [organizationId, conversion.id],
      );
      assertIdentifiedWithinAmount(recorded, key, amount, conversion);
      const now = new Date();
      await sql.rows(
        `insert into conversion_refunds (organization_id, conversion_id, refund_key, amount, created_at, updated_at)
          values (?, ?, ?, ?, ?, ?)
          on conflict (organization_id, conversion_id, refund_key)
          do update set amount = excluded.amount, updated_at = excluded.updated_at
          where conversion_refunds.amount < excluded.amount`,
        [organizationId, conversion.id, key, amount, now, now],
      );
      const gross = conversion.gross_commission_amount ?? conversion.commission_amount;
      const outcome = refundOutcome(withReport(recorded, key, amount), { amount: conversion.amount, currency: conversion.currency, grossCommission: gross });
      if (new Decimal(outcome.refunded).equals(new Decimal(conversion.refunded_amount ?? '0'))) {
        return { conversion: toConversionDto(conversion), deduped: true };
      }
      const updated = await sql.one<ConversionRecord>(
        `update conversions set refunded_amount = ?, gross_commission_amount = ?, commission_amount = ?, status = ?, reversed_at = ?
          where id = ? returning *`,
        [
          outcome.refunded,
          gross,
          outcome.commission,
          outcome.reversed ? 'reversed' : 'approved',
          outcome.reversed ? (conversion.reversed_at ?? now) : null,
          conversion.id,
        ],
      );
      return { conversion: toConversionDto(updated ?? conversion), deduped: false };
    });
  }

  /** The conversion of this organization with this external_id, if any. */
  async findByExternal(organizationId: string, externalId: string): Promise<Conversion | undefined> {
    const row = await this.findByExternalId(this.sql(), organizationId, externalId);
    return row ? toConversionDto(row) : undefined;
  }

  /** By the service's UUID or the merchant's external_id; 403 when only another organization has it. */
  async get(organizationId: string, id: string): Promise<Conversion> {
    return toConversionDto(await this.findOwned(this.sql(), organizationId, id));
  }

  private findOwned(sql: Sql, organizationId: string, id: string): Promise<ConversionRecord> {
    return findOwnedRow<ConversionRecord>(sql, CONVERSIONS_BY_MERCHANT_ID, organizationId, id);
  }


  async list(organizationId: string, query: ConversionListQuery): Promise<{ conversions: Conversion[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const before = decodeCursor(query.cursor);
    const where: string[] = ['organization_id = ?'];
    const params: unknown[] = [organizationId];
    const filter = (clause: string, value: unknown) => {
      where.push(clause);
      params.push(value);
    };
    if (query.customer_id) filter('customer_id = ?', query.customer_id);
    if (query.affiliate_id) filter('affiliate_id = ?', query.affiliate_id);
    if (query.program_id) filter('program_id = ?', query.program_id);
    if (query.from) filter('occurred_at >= ?', new Date(query.from));
    if (query.to) filter('occurred_at < ?', new Date(query.to));
    if (before) {
      where.push('(occurred_at, id) < (?, ?)');
      params.push(before.at, before.id);
    }
    params.push(limit + 1);
    const rows = await this.sql().rows<ConversionRecord>(
      `select * from conversions where ${where.join(' and ')} order by occurred_at desc, id desc limit ?`,
      params,
    );
    const page = pageOf(rows, limit, (c) => ({ at: new Date(c.occurred_at), id: c.id }));
    return { conversions: page.items.map(toConversionDto), next_cursor: page.next_cursor };
  }

  private findByExternalId(sql: Sql, organizationId: string, externalId: string): Promise<ConversionRecord | undefined> {
    return sql.one<ConversionRecord>('select * from conversions where organization_id = ? and external_id = ?', [organizationId, externalId]);
  }
}

