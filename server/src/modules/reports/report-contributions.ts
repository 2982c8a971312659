import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
  type CompiledQuery,
  type RawBuilder,
} from 'kysely';

/**
 * What a row contributes to the reports: the one home of that rule. Every path that writes a click,
 * customer, conversion or commission the reports count writes its contribution, in the same
 * statement or transaction, into report_deltas (Migration20270201000000_report_deltas): an
 * insert-only log per organization, one row per (day, affiliate, currency, due_at) of a statement,
 * so a batch of a thousand clicks adds a few rows and no statement waits on a summary row. The
 * folder (report-fold.ts) moves an organization's due deltas into the day and month summaries with
 * `DELETE ... RETURNING`; the reports read the summaries plus the organization's deltas not yet
 * folded, in one snapshot, so they are exact whether a delta is folded or not.
 *
 * A row's contribution depends only on the row (never on the clock), so taking a row out is adding
 * its contribution with sign -1, whatever the folder did in between:
 * - a click: one click (and one entry) on the UTC day of its occurred_at, no currency ('': the
 *   program's currency, read with the report);
 * - a customer: one customer on the day of its created_at;
 * - a conversion: one conversion, its amount as revenue, its refunded_amount, on the day of its
 *   occurred_at, in its currency;
 * - a commission entry: its amount in the figure of its stored status, on the day of its
 *   conversion's occurred_at (an adjustment: of its created_at). A pending entry with an
 *   approves_at also schedules its approval: pending -amount, approved +amount, due at approves_at
 *   (due_at). A delta counts once its due_at has passed (`due_at <= now()`, the others are
 *   '-infinity'), which is the ledger's rule (commission_due: pending and approves_at <= now is
 *   approved) applied to the figures: the reports show an entry approved exactly when the lists do.
 *
 * Clicks deleted by retention stay counted (their deltas are not taken out); rows deleted by an
 * import's undo are taken out before the delete (countRows with -1); a test-data reset and an
 * organization's deletion delete the organization's summaries and deltas with everything else.
 */

export const DELTA_FIGURES = [
  'entries',
  'clicks',
  'customers',
  'conversions',
  'revenue',
  'refunded',
  'pending',
  'approved',
  'paid',
  'reversed',
  'rejected',
  'on_hold',
] as const;
const COUNTS = new Set(['entries', 'clicks', 'customers', 'conversions']);
const STATUSES = ['pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'] as const;

const COUNTED_KINDS = ['clicks', 'customers', 'conversions', 'commissions'] as const;
export type CountedKind = (typeof COUNTED_KINDS)[number];

const zero = (figure: string) => (COUNTS.has(figure) ? '0::bigint' : '0::numeric');
const KEY = `organization_id, day, due_at, affiliate_id, program_id, currency`;
const IMMEDIATE = `'-infinity'::timestamptz`;

/** One select per part: the key columns, then every figure (those not given are zero). */
function part(key: string, from: string, figures: Partial<Record<(typeof DELTA_FIGURES)[number], string>>): string {
  return `select ${key}, ${DELTA_FIGURES.map((f) => `${figures[f] ?? zero(f)} as ${f}`).join(', ')} from ${from}`;
}

const utcDay = (column: string) => `(${column} at time zone 'UTC')::date`;

/**
 * The contribution rows of the rows of `source` (a table alias or CTE with the kind's columns; for
 * commissions also `period_at`: their conversion's occurred_at, or their created_at), times `sign`.
 * SQL text without parameters, to be a part of a statement.
 */
export function contributionsSql(kind: CountedKind, source: string, sign: 1 | -1): string {
  const s = `${sign}`;
  switch (kind) {
    case 'clicks':
      return part(
        `r.organization_id, ${utcDay('r.occurred_at')} as day, ${IMMEDIATE} as due_at, r.affiliate_id, r.program_id, ''::text as currency`,
        `${source} r`,
        { entries: `${s}::bigint`, clicks: `${s}::bigint` },
      );
    case 'customers':
      return part(
        `r.organization_id, ${utcDay('r.created_at')} as day, ${IMMEDIATE} as due_at, r.affiliate_id, r.program_id, ''::text as currency`,
        `${source} r`,
        { entries: `${s}::bigint`, customers: `${s}::bigint` },
      );
    case 'conversions':
      return part(
        `r.organization_id, ${utcDay('r.occurred_at')} as day, ${IMMEDIATE} as due_at, r.affiliate_id, r.program_id, r.currency::text as currency`,
        `${source} r`,
        {
          entries: `${s}::bigint`,
          conversions: `${s}::bigint`,
          revenue: `${s} * r.amount`,
          refunded: `${s} * r.refunded_amount`,
        },
      );
    case 'commissions': {
      const key = (dueAt: string) =>
        `r.organization_id, ${utcDay('r.period_at')} as day, ${dueAt} as due_at, r.affiliate_id, r.program_id, r.currency::text as currency`;
      const buckets = Object.fromEntries(
        STATUSES.map((status) => [status, `case when r.status = '${status}' then ${s} * r.amount else 0::numeric end`]),
      );
      return `${part(key(IMMEDIATE), `${source} r`, { entries: `${s}::bigint`, ...buckets })}
        union all
        ${part(key('r.approves_at'), `${source} r where r.status = 'pending' and r.approves_at is not null`, {
          pending: `${-sign} * r.amount`,
          approved: `${s} * r.amount`,
        })}`;
    }
  }
}

/** `source`'s commissions with their period_at (their conversion's occurred_at, or their created_at). */
export function commissionsWithPeriod(source: string): string {
  return `(select k.*, coalesce(v.occurred_at, k.created_at) as period_at from ${source} k
    left join lateral (select v.occurred_at from conversions v where v.id = k.conversion_id and v.organization_id = k.organization_id) v on true)`;
}

/**
 * The contributions of every counted row that `rowsOf(table)` selects (a subquery of the table's
 * whole rows: an organization's, or those an old model had not folded), one part per kind, for
 * deltasInsertSql: how a bulk writer (a migration, a seed) counts rows it wrote with plain SQL.
 */
export function contributionsOfRows(rowsOf: (table: CountedKind) => string): string[] {
  return COUNTED_KINDS.map((kind) =>
    contributionsSql(kind, kind === 'commissions' ? commissionsWithPeriod(rowsOf(kind)) : rowsOf(kind), 1),
  );
}

/**
 * The INSERT of the contributions `parts` (contributionsSql texts) into report_deltas, summed per
 * key: the body of a data-modifying CTE, or a statement of its own.
 */
export function deltasInsertSql(parts: readonly string[]): string {
  const sums = DELTA_FIGURES.map((f) => `sum(c.${f})`);
  return `insert into report_deltas (${KEY}, ${DELTA_FIGURES.join(', ')})
    select ${KEY.split(', ')
      .map((k) => `c.${k}`)
      .join(', ')}, ${sums.join(', ')}
    from (${parts.join('\n    union all\n    ')}) c
    group by ${KEY.split(', ')
      .map((k) => `c.${k}`)
      .join(', ')}
    having ${sums.map((s) => `${s} <> 0`).join(' or ')}`;
}

/** Ids of an organization's rows, per kind. */
export type CountedRows = Partial<Record<CountedKind, readonly string[]>>;

/**
 * The statement that adds (sign 1) or takes out (-1) what these rows of the organization count in
 * the reports, as they are now; it locks them (FOR UPDATE, until the transaction ends), so taking
 * out before a change and adding after it, in one transaction, moves exactly what changed. Run it
 * in the transaction that writes the rows: after an insert, before a delete, around an update.
 * Undefined when no id is given.
 */
export function countRows(organizationId: string, rows: CountedRows, sign: 1 | -1): RawBuilder<unknown> | undefined {
  const kinds = COUNTED_KINDS.filter((k) => (rows[k]?.length ?? 0) > 0);
  if (kinds.length === 0) return undefined;
  // An entry's period (its conversion's occurred_at) is joined inside its CTE, on the same
  // organization: on Citus one shard's join, where a lateral outer join from the CTE's rows to
  // conversions is refused ("cannot perform a lateral outer join ... CTEs").
  const ctes = kinds.map((kind) => {
    const ids = sql`${[...rows[kind]!]}::uuid[]`;
    return kind === 'commissions'
      ? sql`counted_commissions as materialized (select k.*, coalesce(v.occurred_at, k.created_at) as period_at from commissions k
          left join conversions v on v.organization_id = k.organization_id and v.id = k.conversion_id
          where k.organization_id = ${organizationId} and k.id = any (${ids}) order by k.id for update of k)`
      : sql`${sql.raw(`counted_${kind}`)} as materialized (select * from ${sql.table(kind)} where organization_id = ${organizationId} and id = any (${ids}) order by id for update)`;
  });
  const parts = kinds.map((kind) => contributionsSql(kind, `counted_${kind}`, sign));
  return sql`with ${sql.join(ctes)} ${sql.raw(deltasInsertSql(parts))}`;
}

/**
 * Compiles the statements of this module without a connection (kysely's documented compile-only
 * setup), so that they run on whichever executor the caller's transaction has (db/sql.ts, kysely).
 */
const compiler = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

export function compiled<T>(query: RawBuilder<T>): { compile(): CompiledQuery<T> } {
  return { compile: () => query.compile(compiler) };
}
