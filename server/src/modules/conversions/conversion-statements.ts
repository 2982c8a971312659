import { UnnestInsert, unnestParameters, type UnnestColumn } from '../../db/batched-insert.js';
import { StoredStatement } from '../../db/stored-statement.js';
import type { ConversionKind } from '../../attribution/kind.js';
import type { CustomerStatus } from '../customers/customers.service.js';
import type { ConversionRecord } from './conversions.service.js';

/**
 * The statements that write conversions on the hot paths, batched (db/batched-insert.ts): by
 * click, a plain idempotent insert; by customer, the guarded write below.
 */

export type ConversionRow = [
  id: string,
  organizationId: string,
  externalId: string,
  amount: string,
  currency: string,
  kind: ConversionKind,
  commissionAmount: string,
  customerId: string | null,
  affiliateId: string,
  programId: string,
  clickId: string | null,
  occurredAt: Date,
  createdAt: Date,
];

/** The columns a new conversion is written with, in ConversionRow's order. */
const CONVERSION_COLUMN_TYPES: UnnestColumn[] = [
  { name: 'id', type: 'uuid' },
  { name: 'organization_id', type: 'uuid' },
  { name: 'external_id', type: 'text' },
  { name: 'amount', type: 'numeric' },
  { name: 'currency', type: 'text' },
  { name: 'kind', type: 'text' },
  { name: 'commission_amount', type: 'numeric' },
  { name: 'customer_id', type: 'text' },
  { name: 'affiliate_id', type: 'uuid' },
  { name: 'program_id', type: 'uuid' },
  { name: 'click_id', type: 'uuid' },
  { name: 'occurred_at', type: 'timestamptz' },
  { name: 'created_at', type: 'timestamptz' },
];
const CONVERSION_COLUMNS = CONVERSION_COLUMN_TYPES.map((c) => c.name).join(', ');

/** Conversions by click: inserted unless their (organization, external_id) exists. */
export const INSERT_CONVERSIONS = new UnnestInsert<ConversionRow>(
  'conversions',
  CONVERSION_COLUMN_TYPES,
  { suffix: 'on conflict (organization_id, external_id) do nothing returning *', orderBy: 'external_id' },
);

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
export const GUARDED_COLUMNS: UnnestColumn[] = [
  { name: 'customer_pk', type: 'uuid' },
  { name: 'observed_first', type: 'timestamptz' },
  { name: 'observed_status', type: 'text' },
  ...CONVERSION_COLUMN_TYPES,
  { name: 'next_first', type: 'timestamptz' },
  { name: 'next_status', type: 'text' },
];
const WRITE_FOR_CUSTOMERS_TEXT = `with input as (
    select * from unnest(${unnestParameters(GUARDED_COLUMNS)})
      with ordinality as t(${GUARDED_COLUMNS.map((c) => c.name).join(', ')}, ord)
  ), guard as (
    select c.id from customers c join input i on c.id = i.customer_pk
    where date_trunc('milliseconds', c.first_conversion_at) is not distinct from i.observed_first and c.status = i.observed_status
    order by c.id
    for update of c
  ), inserted as (
    insert into conversions (${CONVERSION_COLUMNS})
    select ${CONVERSION_COLUMNS} from input where customer_pk in (select id from guard)
    order by external_id
    on conflict (organization_id, external_id) do nothing
    returning *
  ), customer_update as (
    update customers c set first_conversion_at = i.next_first, status = i.next_status, updated_at = i.created_at
    from input i
    where c.id = i.customer_pk and i.id in (select id from inserted)
      and (date_trunc('milliseconds', c.first_conversion_at) is distinct from i.next_first or c.status is distinct from i.next_status)
  )
  select i.ord, i.customer_pk in (select id from guard) as guarded,
    (select row_to_json(x) from inserted x where x.id = i.id) as conversion
  from input i order by i.ord`;
export const WRITE_FOR_CUSTOMERS = new StoredStatement(
  'conversions_write_for_customers',
  GUARDED_COLUMNS.map((c) => `${c.type}[]`),
  'table(ord bigint, guarded boolean, conversion json)',
  WRITE_FOR_CUSTOMERS_TEXT,
);

export type GuardedRow = [customerPk: string, observedFirst: Date | null, observedStatus: CustomerStatus, ...ConversionRow, nextFirst: Date, nextStatus: CustomerStatus];
export interface GuardedResult {
  guarded: boolean;
  conversion: ConversionRecord | null;
}

