import type { MikroORM } from '@mikro-orm/postgresql';
import { sql, type CompiledQuery } from 'kysely';
import { columnArrays, columnTypeOf, providedColumns, withValues, type UnnestColumn } from '../../db/batched-insert.js';
import { kyselyOf, metadataOf } from '../../db/database.js';
import { Db } from '../../db/sql.js';
import { saleEntriesOfInserted } from '../commissions/commissions.repository.js';
import { CommissionEntity } from '../commissions/commission.entity.js';
import { batchedEventsOf, type BatchedEventType } from '../events/outbox.js';
import { CustomerEntity } from '../customers/customer.entity.js';
import { ConversionEntity } from './conversion.entity.js';
import { contributionsSql, deltasInsertSql } from '../reports/report-contributions.js';
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
  const parameters = sql.join(inputColumns.map((c, i) => sql.raw(`$${i + 1}::${c.type}[]`)));
  // The statement's organization, after the arrays (rows of a statement are one organization's:
  // the repository's batchers group by it), for the outbox's subscription probe.
  const organization = `$${inputColumns.length + 1}::uuid`;
  return {
    conversionColumns,
    inputColumns,
    list,
    conversions: sql.table(metadataOf(orm, ConversionEntity).tableName),
    input: sql`input as (select * from unnest(${parameters}) with ordinality as t(${list(inputColumns)}, ord))`,
    saleEntries: sql`sale_entries as (${saleEntriesOfInserted('inserted', 'input')})`,
    // What the new conversions and their entries count in the reports (modules/reports), summed
    // per key for the whole batch, in this same statement.
    reportDeltas: sql`report_deltas_written as (${sql.raw(
      deltasInsertSql([
        contributionsSql('conversions', 'inserted', 1),
        contributionsSql(
          'commissions',
          '(select k.*, x.occurred_at as period_at from sale_entries k join inserted x on x.id = k.conversion_id)',
          1,
        ),
      ]),
    )})`,
    // The outbox batch of the new conversions and their entries (modules/events/outbox.ts), in this
    // same statement; `also` adds events of the statement's other writes (a renewal's customer).
    events: (...also: (readonly [BatchedEventType, string])[]) =>
      sql`outbox as (${sql.raw(batchedEventsOf([['conversion.created', 'inserted'], ['commission.created', 'sale_entries'], ...also], organization))})`,
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
 * A statement whose parameters are numbered in its text (`$1::uuid[]`…: the input's arrays, each
 * named where the statement needs it, then the organization), compiled once by kysely and given
 * its values at each run by withValues: `count` parameters.
 */
function positional(compiled: CompiledQuery<unknown>, count: number): CompiledQuery<unknown> {
  if (compiled.parameters.length !== 0) throw new Error('a positional statement takes no kysely parameters');
  return { ...compiled, parameters: new Array<unknown>(count).fill(null) };
}

/** The organization of a statement's writes, its last parameter: one, as the batchers group them. */
function organizationOf(writes: readonly NewSale[]): string {
  const organizationId = writes[0].conversion.organization_id;
  if (writes.some((w) => w.conversion.organization_id !== organizationId))
    throw new Error('a batched conversion write must be one organization’s');
  return organizationId;
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
      withValues<ConversionRecord>(statement, [...inputArrays(sales, conversionColumns), organizationOf(sales)]),
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
    const text = sql`with ${parts.input}, inserted as (
    insert into ${conversions} (${list(conversionColumns)})
    select ${list(conversionColumns)} from input
    order by external_id
    on conflict (organization_id, external_id) do nothing
    returning *
  ), ${parts.saleEntries}, ${parts.reportDeltas}, ${parts.events()}
  select * from inserted`;
    const statement = positional(text.compile(kyselyOf(orm)), parts.inputColumns.length + 1);
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
 * Customers are found by the organization (every statement is one organization's: the batchers
 * group by it, so that on Citus it runs on that organization's shard) and their ids: `id =
 * any(<the batch's customer ids>)`, an index probe, whatever the statistics (CI's PostgreSQL never
 * analyzes; a join with the batch's input was once planned as a sequential scan of customers). The
 * guard reads each customer's observed state from the arrays at the customer's position in them,
 * not through a lateral join with the input (Citus cannot push that down to a shard), and takes
 * its customers in id order: concurrent statements lock them in the same order.
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
      organizationOf(writes),
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
    const { conversionColumns, inputColumns, list, conversions } = parts;
    const customers = sql.table(metadataOf(orm, CustomerEntity).tableName);
    // The guard compares the customer as the request saw it. `first_conversion_at` is null until the
    // customer's first conversion, so it is compared null-safely (`is not distinct from`: two nulls
    // are the same state); the other two columns are not null and compare with `=`.
    // The guard reads the observed state from the first four arrays by the customer's position in
    // the first (one write per customer and statement: the batcher's exclusive key). On Citus, a
    // statement's customers must be read by the organization (a constant), not through a lateral
    // join with the input CTE, which Citus cannot push down to a shard, nor through a subquery over
    // the parameters' unnest, which its recursive planning reads back wrongly ("PGCOPY").
    const [pk, first, status, paid] = inputColumns.slice(0, 4).map((c, i) => `$${i + 1}::${c.type}[]`);
    const at = (array: string) => sql.raw(`(${array})[array_position(${pk}, c.id)]`);
    const organization = sql.raw(`$${inputColumns.length + 1}::uuid`);
    const text = sql`with ${parts.input}, guard as (
    select c.id from ${customers} c
    where c.organization_id = ${organization} and c.id = any (${sql.raw(pk)})
      and date_trunc('milliseconds', c.first_conversion_at) is not distinct from ${at(first)}
      and c.status = ${at(status)} and c.paid_conversions = ${at(paid)}
    order by c.id
    for update
  ), inserted as (
    insert into ${conversions} (${list(conversionColumns)})
    select ${list(conversionColumns)} from input where customer_pk in (select id from guard)
    order by external_id
    on conflict (organization_id, external_id) do nothing
    returning *
  ), ${parts.saleEntries}, customer_update as (
    update ${customers} c set first_conversion_at = i.next_first, status = i.next_status, paid_conversions = i.next_paid, updated_at = i.created_at
    from input i
    where c.organization_id = ${organization} and c.id = i.customer_pk and i.id in (select id from inserted)
      and c.id in (select id from guard)
      and (date_trunc('milliseconds', c.first_conversion_at) is distinct from i.next_first or c.status is distinct from i.next_status
        or c.paid_conversions is distinct from i.next_paid)
    returning c.*
  ), ${parts.reportDeltas}, ${parts.events(['customer.updated', 'customer_update'])}
  select i.ord, i.customer_pk in (select id from guard) as guarded,
    (select row_to_json(x) from inserted x where x.id = i.id) as conversion
  from input i order by i.ord`;
    const statement = positional(text.compile(kyselyOf(orm)), inputColumns.length + 1);
    this.built = { conversionColumns, statement };
    return this.built;
  }
}
