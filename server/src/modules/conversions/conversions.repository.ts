import type { InferEntity } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { sql, type Kysely } from 'kysely';
import type { RecordedRefund } from '../../attribution/refunds.js';
import type { RefundDecision } from '../../charges/decision.js';
import type { HoldReason } from '../../charges/fraud.js';
import type { AppliedRate } from '../../attribution/program-rules.js';
import {
  InsertBatcher,
  columnArrays,
  columnTypeOf,
  providedColumns,
  writeBatching,
  type UnnestColumn,
} from '../../db/batched-insert.js';
import { kyselyOf, readFromReplica, metadataOf, type NewRow, type Tables } from '../../db/database.js';
import { CONVERSIONS_BY_MERCHANT_ID, findOwnedRow } from '../../db/owned-row.js';
import { Sql } from '../../db/sql.js';
import { ParameterisedStatement } from '../../db/statement.js';
import { NotFoundError } from '../../http/errors.js';
import { CommissionsRepository, saleEntriesOfInserted } from '../commissions/commissions.repository.js';
import { CommissionEntity } from '../commissions/commission.entity.js';
import { batchedEventsOf, recordEvents, type BatchedEventType } from '../events/outbox.js';
import { CustomerEntity } from '../customers/customer.entity.js';
import type { CustomerStatus } from '../customers/customers.service.js';
import { ConversionEntity } from './conversion.entity.js';

/**
 * The conversions module's way to the database, and the only code of the module that touches it:
 * the hot writes (batched across concurrent requests: by click, a plain idempotent insert; by
 * customer, the guarded write below), the reads, and a refund's transaction. Rows are typed from
 * the entity definitions (conversion.entity.ts, conversion-refund.entity.ts), and the batched
 * statements' columns are those a new conversion's row provides.
 */

export type ConversionRecord = InferEntity<typeof ConversionEntity>;

/** A new conversion as the hot paths write it. */
export type NewConversion = NewRow<'conversions'> & { id: string };

/**
 * A new conversion and what its sale entry is written with (modules/commissions: saleApprovesAt):
 * the entry comes in the same statement, when the commission is above zero.
 */
export interface NewSale {
  conversion: NewConversion;
  /** Its sale entry's id (db/row-ids.ts), used only if the conversion earns an entry. */
  saleId: string;
  saleApprovesAt: Date | null;
  /** The rate its entry records (attribution/program-rules.ts AppliedRate). */
  saleRate: AppliedRate;
  /** Why its entry is held (charges/fraud.ts); undefined: not held. */
  saleHoldReasons: HoldReason[] | undefined;
}

/** The customer state a conversion by customer was decided on, and the state it leaves the customer in. */
export interface CustomerGuard {
  id: string;
  observedFirstConversionAt: Date | null;
  observedStatus: CustomerStatus;
  /** Paid conversions counted (commission_max_conversions): observed, and after this charge. */
  observedPaidConversions: number;
  nextFirstConversionAt: Date;
  nextStatus: CustomerStatus;
  nextPaidConversions: number;
}

export interface GuardedResult {
  /** The customer was still in the observed state: the decision stands (the conversion is inserted unless its external_id exists). */
  guarded: boolean;
  /** undefined: not inserted (not guarded, or the external_id exists). */
  conversion: ConversionRecord | undefined;
}

export interface ConversionFilter {
  customer_id?: string;
  affiliate_id?: string;
  program_id?: string;
  from?: Date;
  to?: Date;
  /** Keyset: only conversions before this (occurred_at, id). */
  before?: { at: Date; id: string };
}

interface GuardedWrite extends NewSale {
  customer: CustomerGuard;
}

interface GuardedRow {
  guarded: boolean;
  conversion: ConversionRecord | null;
}

/** row_to_json gives numbers for numeric columns; keep them as the exact decimal text the rest expects. */
function fromJson(row: ConversionRecord): ConversionRecord {
  return { ...row, amount: String(row.amount), commission_amount: String(row.commission_amount) };
}

export class ConversionsRepository {
  /** Conversions by click of concurrent requests, stored together with their sale entries (ConversionsByClickWrites). */
  private readonly insertsByClick: InsertBatcher<NewSale, ConversionRecord | undefined>;
  /** Guarded writes by customer of concurrent requests, one statement for all (GuardedConversionWrites). */
  private readonly guardedWrites: InsertBatcher<GuardedWrite, GuardedRow>;

  private readonly commissions: CommissionsRepository;

  constructor(private readonly orm: MikroORM) {
    this.commissions = new CommissionsRepository(orm);
    const byClick = new ConversionsByClickWrites();
    this.insertsByClick = new InsertBatcher((sales) => byClick.run(this.orm, sales), writeBatching(this.orm));
    const guarded = new GuardedConversionWrites();
    this.guardedWrites = new InsertBatcher((writes) => guarded.run(this.orm, writes), {
      ...writeBatching(this.orm),
      exclusiveKey: (write) => write.customer.id,
    });
  }

  private db(): Kysely<Tables> {
    return kyselyOf(this.orm);
  }

  /** Inserts a conversion by click, with its sale entry; undefined: its external_id exists already. */
  insertByClick(sale: NewSale): Promise<ConversionRecord | undefined> {
    return this.insertsByClick.add(sale);
  }

  /** Inserts a conversion by customer, with its sale entry, only if the customer is still as observed, and moves the customer on. */
  async insertForCustomer(customer: CustomerGuard, sale: NewSale): Promise<GuardedResult> {
    const row = await this.guardedWrites.add({ customer, ...sale });
    return { guarded: row.guarded, conversion: row.conversion ? fromJson(row.conversion) : undefined };
  }

  findByExternalId(organizationId: string, externalId: string): Promise<ConversionRecord | undefined> {
    return this.db()
      .selectFrom('conversions')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('external_id', '=', externalId)
      .executeTakeFirst();
  }

  /** By the service's UUID or the merchant's external_id; 403 when only another organization has it, else 404. */
  findOwned(organizationId: string, id: string): Promise<ConversionRecord> {
    return findOwnedRow<ConversionRecord>(Sql.of(this.orm), CONVERSIONS_BY_MERCHANT_ID, organizationId, id);
  }

  /**
   * A commission tier's metric (attribution/program-rules.ts): the affiliate's distinct customers
   * with a paid conversion, or the gross amount of its conversions in `currency`, whose occurred_at
   * is in [from, to).
   */
  async tierMetric(
    organizationId: string,
    affiliateId: string,
    metric: 'customers' | 'revenue',
    currency: string,
    from: Date,
    to: Date,
  ): Promise<string> {
    const value =
      metric === 'customers'
        ? sql<string>`count(distinct customer_id) filter (where amount > 0)::text`
        : sql<string>`coalesce(sum(amount) filter (where currency = ${currency}), 0)::text`;
    const row = await this.db()
      .selectFrom('conversions')
      .select(value.as('value'))
      .where('organization_id', '=', organizationId)
      .where('affiliate_id', '=', affiliateId)
      .where('occurred_at', '>=', from)
      .where('occurred_at', '<', to)
      .executeTakeFirstOrThrow();
    return row.value;
  }

  /** Newest occurred_at first, at most `limit` rows. */
  list(organizationId: string, filter: ConversionFilter, limit: number): Promise<ConversionRecord[]> {
    return readFromReplica(this.orm, 'GET /api/conversions', (source) => {
      let query = kyselyOf(source).selectFrom('conversions').selectAll().where('organization_id', '=', organizationId);
      if (filter.customer_id) query = query.where('customer_id', '=', filter.customer_id);
      if (filter.affiliate_id) query = query.where('affiliate_id', '=', filter.affiliate_id);
      if (filter.program_id) query = query.where('program_id', '=', filter.program_id);
      if (filter.from) query = query.where('occurred_at', '>=', filter.from);
      if (filter.to) query = query.where('occurred_at', '<', filter.to);
      const before = filter.before;
      if (before)
        query = query.where((eb) => eb(eb.refTuple('occurred_at', 'id'), '<', eb.tuple(before.at, before.id)));
      return query.orderBy('occurred_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    });
  }

  /**
   * A refund of the conversion `id` in one transaction: the conversion locked (concurrent refunds
   * of one charge are decided one after the other), `decide` given it and the refunds recorded for
   * it, and what it decided stored: the report under its key (keeping the larger amount), and the
   * conversion's new refunded amount, commission and status. A refusal thrown by `decide` writes
   * nothing. `changed` is false when the conversion stays as it was.
   */
  async refund(
    organizationId: string,
    id: string,
    decide: (conversion: ConversionRecord, recorded: readonly RecordedRefund[]) => RefundDecision,
  ): Promise<{ conversion: ConversionRecord; changed: boolean }> {
    const target = await this.findOwned(organizationId, id);
    return this.db()
      .transaction()
      .execute(async (trx) => {
        const conversion = (await trx
          .selectFrom('conversions')
          .selectAll()
          .where('id', '=', target.id)
          .forUpdate()
          .executeTakeFirst()) as ConversionRecord | undefined;
        if (!conversion) throw new NotFoundError(CONVERSIONS_BY_MERCHANT_ID.notFound);
        const recorded = await trx
          .selectFrom('conversion_refunds')
          .select(['refund_key as key', sql<string>`amount::text`.as('amount')])
          .where('organization_id', '=', organizationId)
          .where('conversion_id', '=', conversion.id)
          .execute();
        const { report, next } = decide(conversion, recorded);
        const now = new Date();
        if (report) {
          await trx
            .insertInto('conversion_refunds')
            .values({
              organization_id: organizationId,
              conversion_id: conversion.id,
              refund_key: report.key,
              amount: report.amount,
              created_at: now,
              updated_at: now,
            })
            .onConflict((conflict) =>
              conflict
                .columns(['organization_id', 'conversion_id', 'refund_key'])
                .doUpdateSet((eb) => ({ amount: eb.ref('excluded.amount'), updated_at: eb.ref('excluded.updated_at') }))
                .where('conversion_refunds.amount', '<', (eb) => eb.ref('excluded.amount')),
            )
            .execute();
        }
        if (!next) return { conversion, changed: false };
        const updated = (await trx
          .updateTable('conversions')
          .set(next)
          .where('id', '=', conversion.id)
          .returningAll()
          .executeTakeFirstOrThrow()) as ConversionRecord;
        await recordEvents(trx, 'conversion.refunded', [updated]);
        await this.commissions.applyRefund(
          trx,
          {
            ...updated,
            customer_id: updated.customer_id ?? null,
            commissionBefore: String(conversion.commission_amount),
            commissionAfter: String(updated.commission_amount),
          },
          now,
        );
        return { conversion: updated, changed: true };
      });
  }
}

/**
 * The start every batched conversion write shares: `input`, the rows of the statement's array
 * parameters (the conversion's columns and its sale entry's `sale_id`, `sale_approves_at`…, among
 * the write's own), numbered by ordinality; and how `inserted`'s new conversions get their sale
 * entries (`sale_entries`, from the commissions module). Built once per statement from the
 * entities' metadata (every write of a statement provides the same conversion columns).
 */
function conversionWriteParts(orm: MikroORM, conversion: NewConversion, before: UnnestColumn[], after: UnnestColumn[]) {
  const conversionColumns = providedColumns(orm, ConversionEntity, conversion);
  const inputColumns: UnnestColumn[] = [
    ...before,
    ...conversionColumns,
    { name: 'sale_id', type: columnTypeOf(orm, CommissionEntity, 'id') },
    { name: 'sale_approves_at', type: columnTypeOf(orm, CommissionEntity, 'approves_at') },
    { name: 'sale_rate', type: 'jsonb' },
    { name: 'sale_hold_reasons', type: 'jsonb' },
    ...after,
  ];
  const list = (columns: readonly UnnestColumn[]) => sql.join(columns.map((c) => sql.id(c.name)));
  const parameters = sql.join(inputColumns.map((c, i) => sql.raw(`$${i + 1}::${c.type}[]`)));
  return {
    conversionColumns,
    inputColumns,
    list,
    conversions: sql.table(metadataOf(orm, ConversionEntity).tableName),
    input: sql`input as (select * from unnest(${parameters}) with ordinality as t(${list(inputColumns)}, ord))`,
    saleEntries: sql`sale_entries as (${saleEntriesOfInserted('inserted', 'input')})`,
    // The outbox batch of the new conversions and their entries (modules/events/outbox.ts), in this
    // same statement; `also` adds events of the statement's other writes (a renewal's customer).
    events: (...also: (readonly [BatchedEventType, string])[]) =>
      sql`outbox as (${sql.raw(batchedEventsOf([['conversion.created', 'inserted'], ['commission.created', 'sale_entries'], ...also]))})`,
  };
}

/** The parameters of a write's `input`: the columns' arrays, in order. */
function inputArrays(writes: readonly NewSale[], conversionColumns: readonly UnnestColumn[]): unknown[][] {
  return [
    ...columnArrays(
      writes.map((w) => w.conversion),
      conversionColumns,
    ),
    writes.map((w) => w.saleId),
    writes.map((w) => w.saleApprovesAt),
    writes.map((w) => JSON.stringify(w.saleRate)),
    writes.map((w) => (w.saleHoldReasons?.length ? JSON.stringify(w.saleHoldReasons) : null)),
  ];
}

/**
 * Conversions by click, batched (db/batched-insert.ts): inserted in external_id order unless their
 * (organization, external_id) exists (concurrent statements inserting the same keys then wait for
 * each other rather than deadlock), each with its sale entry. Answers each input's inserted
 * conversion, or undefined where the external_id existed.
 */
class ConversionsByClickWrites {
  private built?: { conversionColumns: UnnestColumn[]; statement: ParameterisedStatement };

  async run(orm: MikroORM, sales: readonly NewSale[]): Promise<(ConversionRecord | undefined)[]> {
    const { conversionColumns, statement } = this.build(orm, sales[0].conversion);
    const inserted = await statement.run<ConversionRecord>(kyselyOf(orm), inputArrays(sales, conversionColumns));
    const byId = new Map(inserted.map((row) => [row.id, row]));
    return sales.map((sale) => byId.get(sale.conversion.id));
  }

  private build(
    orm: MikroORM,
    conversion: NewConversion,
  ): { conversionColumns: UnnestColumn[]; statement: ParameterisedStatement } {
    if (this.built) return this.built;
    const parts = conversionWriteParts(orm, conversion, [], []);
    const { conversionColumns, list, conversions } = parts;
    const text = sql`with ${parts.input}, inserted as (
    insert into ${conversions} (${list(conversionColumns)})
    select ${list(conversionColumns)} from input
    order by external_id
    on conflict (organization_id, external_id) do nothing
    returning *
  ), ${parts.saleEntries}, ${parts.events()}
  select * from inserted`.compile(kyselyOf(orm)).sql;
    const statement = new ParameterisedStatement(text);
    this.built = { conversionColumns, statement };
    return this.built;
  }
}

/**
 * The guarded writes of conversions by customer, batched (db/batched-insert.ts), one statement
 * for many requests (at most one per customer: each decides on its customer's observed state).
 * Per row: lock the customer only if it is still in the observed state (first_conversion_at, paid_conversions,
 * status) the kind, commission and next status were decided on; insert the conversion, and its
 * sale entry, only then; update the customer only if the conversion was inserted and the customer
 * actually changes (most renewals change nothing: no new row version, no WAL for it). Under READ
 * COMMITTED, FOR UPDATE waits for a concurrent writer of the customer and re-checks the condition
 * on the row it committed, so a decision made on a stale state never lands (`guarded` is false and
 * the caller decides again; timestamps compare at the millisecond precision of the values the
 * service writes). Customers are locked in id order and conversions inserted in external_id order,
 * so concurrent statements wait for each other rather than deadlock. A duplicate external_id
 * inserts nothing and leaves the customer untouched. One result row per input row, by ordinality.
 * Customers are found by their whole primary key, (id, organization_id): a unique key matched in
 * full is one row to the planner with no statistics at all; the update also names its customers as
 * `id = any(<the guard's ids>)`, an index probe, since a join with the batch's input was planned
 * as a sequential scan of customers on a table never analyzed, like the guard below. `id` alone (a prefix of the key) looked like many rows per id without statistics, and the guard
 * scanned the whole customers table on every statement. The guard is a LATERAL probe per input row
 * (LIMIT 1 keeps it from being flattened into a join): as a join, a large batch (its unnest is
 * estimated at the batch's size) made a hash join over a sequential scan of customers look cheaper
 * than the probes on a table never analyzed, and one slow statement made the next batch larger.
 * The input is taken in customer_pk order, and a nested loop locks in its outer order: customers
 * are still locked in id order.
 */
class GuardedConversionWrites {
  private built?: { conversionColumns: UnnestColumn[]; statement: ParameterisedStatement };

  async run(orm: MikroORM, writes: readonly GuardedWrite[]): Promise<GuardedRow[]> {
    const { conversionColumns, statement } = this.build(orm, writes[0].conversion);
    const customers = writes.map((w) => w.customer);
    const values = [
      customers.map((c) => c.id),
      customers.map((c) => c.observedFirstConversionAt),
      customers.map((c) => c.observedStatus),
      customers.map((c) => c.observedPaidConversions),
      ...inputArrays(writes, conversionColumns),
      customers.map((c) => c.nextFirstConversionAt),
      customers.map((c) => c.nextStatus),
      customers.map((c) => c.nextPaidConversions),
    ];
    return statement.run<GuardedRow>(kyselyOf(orm), values);
  }

  private build(
    orm: MikroORM,
    conversion: NewConversion,
  ): { conversionColumns: UnnestColumn[]; statement: ParameterisedStatement } {
    if (this.built) return this.built;
    const type = (column: string) => columnTypeOf(orm, CustomerEntity, column);
    const parts = conversionWriteParts(
      orm,
      conversion,
      [
        { name: 'customer_pk', type: type('id') },
        { name: 'observed_first', type: type('first_conversion_at') },
        { name: 'observed_status', type: type('status') },
        { name: 'observed_paid', type: type('paid_conversions') },
      ],
      [
        { name: 'next_first', type: type('first_conversion_at') },
        { name: 'next_status', type: type('status') },
        { name: 'next_paid', type: type('paid_conversions') },
      ],
    );
    const { conversionColumns, list, conversions } = parts;
    const customers = sql.table(metadataOf(orm, CustomerEntity).tableName);
    const text = sql`with ${parts.input}, guard as (
    select c.id from (select * from input order by customer_pk) i cross join lateral (
      select c.id from ${customers} c
      where c.id = i.customer_pk and c.organization_id = i.organization_id
        and date_trunc('milliseconds', c.first_conversion_at) is not distinct from i.observed_first and c.status = i.observed_status
        and c.paid_conversions = i.observed_paid
      limit 1
      for update
    ) c
  ), inserted as (
    insert into ${conversions} (${list(conversionColumns)})
    select ${list(conversionColumns)} from input where customer_pk in (select id from guard)
    order by external_id
    on conflict (organization_id, external_id) do nothing
    returning *
  ), ${parts.saleEntries}, customer_update as (
    update ${customers} c set first_conversion_at = i.next_first, status = i.next_status, paid_conversions = i.next_paid, updated_at = i.created_at
    from input i
    where c.id = i.customer_pk and c.organization_id = i.organization_id and i.id in (select id from inserted)
      and c.id = any (array(select id from guard))
      and (date_trunc('milliseconds', c.first_conversion_at) is distinct from i.next_first or c.status is distinct from i.next_status
        or c.paid_conversions is distinct from i.next_paid)
    returning c.*
  ), ${parts.events(['customer.updated', 'customer_update'])}
  select i.ord, i.customer_pk in (select id from guard) as guarded,
    (select row_to_json(x) from inserted x where x.id = i.id) as conversion
  from input i order by i.ord`.compile(kyselyOf(orm)).sql;
    const statement = new ParameterisedStatement(text);
    this.built = { conversionColumns, statement };
    return this.built;
  }
}
