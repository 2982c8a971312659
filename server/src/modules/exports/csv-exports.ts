import { Readable } from 'node:stream';
import type { MikroORM } from '@mikro-orm/postgresql';
import { stringify, type Stringifier } from 'csv-stringify';
import { Decimal } from 'decimal.js';
import type { ExportKind } from '@affiliate-attribution/contract';
import { minorUnitDigits } from '../../attribution/money.js';
import { sql, type RawBuilder } from 'kysely';
import { Db } from '../../db/sql.js';
import { dueSql } from '../commissions/commission-lifecycle.js';
import { inert } from '../payouts/payout-files.js';

/** `keyset_at`: created_at as PostgreSQL writes it (microseconds; a Date would keep milliseconds and repeat rows). */
type Row = Record<string, string | number | Date | null> & { keyset_at: string; id: string };
type Kind = ExportKind;

/** Rows read per statement: the file is written page by page, never held whole. */
export const EXPORT_PAGE_ROWS = 1000;

/** How a column's value becomes a cell: free text made inert (a spreadsheet formula), amounts exact in major units, dates ISO-8601. */
type Cell = 'text' | 'id' | 'date' | 'money';

interface ExportShape {
  columns: [name: string, cell: Cell][];
  /** The page of the organization's rows after the keyset, oldest first. */
  page: (keyset: Keyset) => RawBuilder<Row>;
}

/** Where a page starts: the organization, and the last row of the page before (none: the first page). */
interface Keyset {
  organizationId: string;
  at: string | null;
  id: string | null;
}

const KEYSET = (alias: string, { at, id }: Keyset) =>
  sql`(${at}::timestamptz is null or (${sql.ref(`${alias}.created_at`)}, ${sql.ref(`${alias}.id`)}) > (${at}::timestamptz, ${id}::uuid))
   order by ${sql.ref(`${alias}.created_at`)}, ${sql.ref(`${alias}.id`)} limit ${sql.lit(EXPORT_PAGE_ROWS)}`;

const SHAPES: Record<Kind, ExportShape> = {
  affiliates: {
    columns: [
      ['id', 'id'],
      ['email', 'text'],
      ['name', 'text'],
      ['slug', 'text'],
      ['status', 'id'],
      ['program_id', 'id'],
      ['program_name', 'text'],
      ['payout_email', 'text'],
      ['payout_method', 'id'],
      ['created_at', 'date'],
      ['terms_accepted_at', 'date'],
    ],
    page: (
      k,
    ) => sql<Row>`select a.created_at::text as keyset_at, a.id, a.email, a.name, a.slug, a.status, a.program_id, pg.name as program_name, a.payout_email,
             a.payout_method, a.created_at, a.terms_accepted_at
           from affiliates a join programs pg on pg.id = a.program_id and pg.organization_id = a.organization_id
           where a.organization_id = ${k.organizationId} and ${KEYSET('a', k)}`,
  },
  commissions: {
    columns: [
      ['id', 'id'],
      ['type', 'id'],
      ['status', 'id'],
      ['amount', 'money'],
      ['currency', 'id'],
      ['affiliate_id', 'id'],
      ['affiliate_email', 'text'],
      ['program_id', 'id'],
      ['order_id', 'text'],
      ['customer_id', 'text'],
      ['description', 'text'],
      ['created_at', 'date'],
      ['approves_at', 'date'],
      ['approved_at', 'date'],
    ],
    // The status as GET /api/commissions shows it: a pending entry whose approves_at has passed is approved, then.
    page: (k) => sql<Row>`select c.created_at::text as keyset_at, c.id, c.type,
             case when ${sql.raw(dueSql('c'))} then 'approved' else c.status end as status,
             c.amount::text as amount, c.currency, c.affiliate_id, a.email as affiliate_email, c.program_id,
             v.external_id as order_id, c.customer_id, c.description, c.created_at, c.approves_at,
             coalesce(c.approved_at, case when ${sql.raw(dueSql('c'))} then c.approves_at end) as approved_at
           from commissions c
           join affiliates a on a.id = c.affiliate_id and a.organization_id = c.organization_id
           left join conversions v on v.id = c.conversion_id and v.organization_id = c.organization_id
           where c.organization_id = ${k.organizationId} and ${KEYSET('c', k)}`,
  },
  conversions: {
    columns: [
      ['id', 'id'],
      ['order_id', 'text'],
      ['customer_id', 'text'],
      ['kind', 'id'],
      ['status', 'id'],
      ['amount', 'money'],
      ['refunded_amount', 'money'],
      ['currency', 'id'],
      ['commission_amount', 'money'],
      ['affiliate_id', 'id'],
      ['affiliate_email', 'text'],
      ['program_id', 'id'],
      ['occurred_at', 'date'],
      ['created_at', 'date'],
      ['reversed_at', 'date'],
      ['commission_approved_at', 'date'],
    ],
    page: (
      k,
    ) => sql<Row>`select v.created_at::text as keyset_at, v.id, v.external_id as order_id, v.customer_id, v.kind, v.status, v.amount::text as amount,
             v.refunded_amount::text as refunded_amount, v.currency, v.commission_amount::text as commission_amount,
             v.affiliate_id, a.email as affiliate_email, v.program_id, v.occurred_at, v.created_at, v.reversed_at,
             coalesce(s.approved_at, case when ${sql.raw(dueSql('s'))} then s.approves_at end) as commission_approved_at
           from conversions v
           left join affiliates a on a.id = v.affiliate_id and a.organization_id = v.organization_id
           left join commissions s on s.conversion_id = v.id and s.organization_id = v.organization_id and s.type = 'sale'
           where v.organization_id = ${k.organizationId} and ${KEYSET('v', k)}`,
  },
};

function cell(kind: Cell, value: string | number | Date | null | undefined, currency: unknown): string {
  if (value === null || value === undefined) return '';
  if (kind === 'date') return (value instanceof Date ? value : new Date(String(value))).toISOString();
  if (kind === 'money') {
    const digits = typeof currency === 'string' ? minorUnitDigits(currency) : 2;
    return new Decimal(String(value)).toFixed(digits);
  }
  if (kind === 'text') return inert(String(value));
  return String(value);
}

/** Every row of the organization, one page after another (the next page is read when the stream wants more). */
async function* pages(orm: MikroORM, organizationId: string, shape: ExportShape): AsyncGenerator<string[]> {
  const db = Db.of(orm);
  let after: Row | undefined;
  for (;;) {
    const rows = await db.rows(shape.page({ organizationId, at: after?.keyset_at ?? null, id: after?.id ?? null }));
    for (const row of rows) yield shape.columns.map(([name, kind]) => cell(kind, row[name], row.currency));
    if (rows.length < EXPORT_PAGE_ROWS) return;
    after = rows[rows.length - 1];
  }
}

/** The CSV file of one kind, as a stream: a header row, then the organization's rows, oldest first. */
export function csvExport(orm: MikroORM, organizationId: string, kind: Kind): Stringifier {
  const shape = SHAPES[kind];
  const csv = stringify({ header: true, columns: shape.columns.map(([name]) => name), bom: false });
  const source = Readable.from(pages(orm, organizationId, shape));
  // A database error mid-file ends the download broken (the status is already sent): never a file cut silently.
  source.on('error', (err) => csv.destroy(err));
  source.pipe(csv);
  return csv;
}
