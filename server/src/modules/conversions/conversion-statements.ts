import type { MikroORM } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { UnnestInsert, columnArrays, columnTypeOf, providedColumns, type UnnestColumn } from '../../db/batched-insert.js';
import { kyselyOf, metadataOf, type NewRow } from '../../db/database.js';
import { StoredStatement } from '../../db/stored-statement.js';
import { CustomerEntity } from '../customers/customer.entity.js';
import type { CustomerStatus } from '../customers/customers.service.js';
import { ConversionEntity } from './conversion.entity.js';
import type { ConversionRecord } from './conversions.service.js';

/**
 * The statements that write conversions on the hot paths, batched (db/batched-insert.ts): by
 * click, a plain idempotent insert; by customer, the guarded write below. Both are built from the
 * entity definitions: the columns written are those a new conversion's row provides.
 */

/** A new conversion as the hot paths write it. */
export type NewConversion = NewRow<'conversions'> & { id: string };

/** Conversions by click: inserted unless their (organization, external_id) exists. */
export const INSERT_CONVERSIONS = new UnnestInsert(ConversionEntity, {
  skipConflictsOn: ['organization_id', 'external_id'],
  orderBy: 'external_id',
  returning: true,
});

/** A conversion by customer, and the customer state its kind, commission and next status were decided on. */
export interface GuardedWrite {
  customer: {
    id: string;
    observedFirstConversionAt: Date | null;
    observedStatus: CustomerStatus;
    nextFirstConversionAt: Date;
    nextStatus: CustomerStatus;
  };
  conversion: NewConversion;
}

export interface GuardedResult {
  guarded: boolean;
  conversion: ConversionRecord | null;
}

/**
 * The guarded writes of conversions by customer, batched (db/batched-insert.ts), one statement
 * for many requests (at most one per customer: each decides on its customer's observed state).
 * Per row: lock the customer only if it is still in the observed state (first_conversion_at,
 * status) the kind, commission and next status were decided on; insert the conversion only then;
 * update the customer only if the conversion was inserted and the customer actually changes
 * (most renewals change nothing: no new row version, no WAL for it). Under READ COMMITTED,
 * FOR UPDATE waits for a concurrent writer of the customer and re-checks the condition on the row
 * it committed, so a decision made on a stale state never lands (`guarded` is false and the
 * caller decides again; timestamps compare at the millisecond precision of the values the service
 * writes). Customers are locked in id order and conversions inserted in external_id order, so
 * concurrent statements wait for each other rather than deadlock. A duplicate external_id
 * inserts nothing and leaves the customer untouched. One result row per input row, by ordinality.
 */
export class GuardedConversionWrites {
  private built?: { conversionColumns: UnnestColumn[]; statement: StoredStatement };

  async run(orm: MikroORM, writes: readonly GuardedWrite[]): Promise<GuardedResult[]> {
    const { conversionColumns, statement } = this.build(orm, writes[0].conversion);
    const customers = writes.map((w) => w.customer);
    const values = [
      customers.map((c) => c.id),
      customers.map((c) => c.observedFirstConversionAt),
      customers.map((c) => c.observedStatus),
      ...columnArrays(
        writes.map((w) => w.conversion),
        conversionColumns,
      ),
      customers.map((c) => c.nextFirstConversionAt),
      customers.map((c) => c.nextStatus),
    ];
    return statement.run<GuardedResult>(kyselyOf(orm), values);
  }

  /** The statement, built once from the entities' metadata (every write provides the same conversion columns). */
  private build(orm: MikroORM, conversion: NewConversion): { conversionColumns: UnnestColumn[]; statement: StoredStatement } {
    if (this.built) return this.built;
    const type = (column: string) => columnTypeOf(orm, CustomerEntity, column);
    const conversionColumns = providedColumns(orm, ConversionEntity, conversion);
    const inputColumns: UnnestColumn[] = [
      { name: 'customer_pk', type: type('id') },
      { name: 'observed_first', type: type('first_conversion_at') },
      { name: 'observed_status', type: type('status') },
      ...conversionColumns,
      { name: 'next_first', type: type('first_conversion_at') },
      { name: 'next_status', type: type('status') },
    ];
    const list = (columns: readonly UnnestColumn[]) => sql.join(columns.map((c) => sql.id(c.name)));
    const parameters = sql.join(inputColumns.map((c, i) => sql.raw(`$${i + 1}::${c.type}[]`)));
    const customers = sql.table(metadataOf(orm, CustomerEntity).tableName);
    const conversions = sql.table(metadataOf(orm, ConversionEntity).tableName);
    const text = sql`with input as (
    select * from unnest(${parameters}) with ordinality as t(${list(inputColumns)}, ord)
  ), guard as (
    select c.id from ${customers} c join input i on c.id = i.customer_pk
    where date_trunc('milliseconds', c.first_conversion_at) is not distinct from i.observed_first and c.status = i.observed_status
    order by c.id
    for update of c
  ), inserted as (
    insert into ${conversions} (${list(conversionColumns)})
    select ${list(conversionColumns)} from input where customer_pk in (select id from guard)
    order by external_id
    on conflict (organization_id, external_id) do nothing
    returning *
  ), customer_update as (
    update ${customers} c set first_conversion_at = i.next_first, status = i.next_status, updated_at = i.created_at
    from input i
    where c.id = i.customer_pk and i.id in (select id from inserted)
      and (date_trunc('milliseconds', c.first_conversion_at) is distinct from i.next_first or c.status is distinct from i.next_status)
  )
  select i.ord, i.customer_pk in (select id from guard) as guarded,
    (select row_to_json(x) from inserted x where x.id = i.id) as conversion
  from input i order by i.ord`.compile(kyselyOf(orm)).sql;
    const statement = new StoredStatement(
      'conversions_write_for_customers',
      inputColumns.map((c) => `${c.type}[]`),
      'table(ord bigint, guarded boolean, conversion json)',
      text,
    );
    this.built = { conversionColumns, statement };
    return this.built;
  }
}
