import type { MikroORM } from '@mikro-orm/postgresql';
import { sql, type CompiledQuery } from 'kysely';
import {
  arrayParameter,
  columnArrays,
  columnTypeOf,
  providedColumns,
  withValues,
  type UnnestColumn,
} from '../../db/batched-insert.js';
import { kyselyOf, metadataOf } from '../../db/database.js';
import { Db } from '../../db/sql.js';
import { saleEntriesOfInserted } from '../commissions/commissions.repository.js';
import { CommissionEntity } from '../commissions/commission.entity.js';
import { batchedEventsOf, type BatchedEventType } from '../events/outbox.js';
import { CustomerEntity } from '../customers/customer.entity.js';
import { ConversionEntity } from './conversion.entity.js';
import type { ConversionRecord, CustomerGuard, NewConversion, NewSale } from './conversions.repository.js';

/**
 * The conversions' batched writes (batched across concurrent requests by the repository's
 * InsertBatchers): by click, a plain idempotent insert; for a known customer, the guarded write
 * that inserts only while the customer is still as the request saw it. Each statement is built once
 * from the entities' metadata and run with array parameters.
 */
export interface GuardedWrite extends NewSale {
  customer: CustomerGuard;
}

export interface GuardedRow {
  guarded: boolean;
  conversion: ConversionRecord | null;
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
  const parameters = sql.join(inputColumns.map((c) => arrayParameter(c.type)));
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
export class ConversionsByClickWrites {
  private built?: { conversionColumns: UnnestColumn[]; statement: CompiledQuery<unknown> };

  async run(orm: MikroORM, sales: readonly NewSale[]): Promise<(ConversionRecord | undefined)[]> {
    const { conversionColumns, statement } = this.build(orm, sales[0].conversion);
    const inserted = await Db.of(orm).rows(
      withValues<ConversionRecord>(statement, inputArrays(sales, conversionColumns)),
    );
    const byId = new Map(inserted.map((row) => [row.id, row]));
    return sales.map((sale) => byId.get(sale.conversion.id));
  }

  private build(
    orm: MikroORM,
    conversion: NewConversion,
  ): { conversionColumns: UnnestColumn[]; statement: CompiledQuery<unknown> } {
    if (this.built) return this.built;
    const parts = conversionWriteParts(orm, conversion, [], []);
    const { conversionColumns, list, conversions } = parts;
    const statement = sql`with ${parts.input}, inserted as (
    insert into ${conversions} (${list(conversionColumns)})
    select ${list(conversionColumns)} from input
    order by external_id
    on conflict (organization_id, external_id) do nothing
    returning *
  ), ${parts.saleEntries}, ${parts.events()}
  select * from inserted`.compile(kyselyOf(orm));
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
export class GuardedConversionWrites {
  private built?: { conversionColumns: UnnestColumn[]; statement: CompiledQuery<unknown> };

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
    return Db.of(orm).rows(withValues<GuardedRow>(statement, values));
  }

  private build(
    orm: MikroORM,
    conversion: NewConversion,
  ): { conversionColumns: UnnestColumn[]; statement: CompiledQuery<unknown> } {
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
    // The guard compares the customer as the request saw it. `first_conversion_at` is null until the
    // customer's first conversion, so it is compared null-safely (`is not distinct from`: two nulls
    // are the same state); the other two columns are not null and compare with `=`.
    const statement = sql`with ${parts.input}, guard as (
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
  from input i order by i.ord`.compile(kyselyOf(orm));
    this.built = { conversionColumns, statement };
    return this.built;
  }
}
