import type { MikroORM } from '@mikro-orm/postgresql';
import { Sql } from '../../db/sql.js';
import { effectiveStatusSql } from '../commissions/commission-lifecycle.js';

/**
 * The reports' read model (migrations 20261227000000_reports, 20261231000100_report_deferred_days,
 * 20261231000300_report_affiliate_days): summaries folded in the background plus a live
 * aggregation of what is not folded yet, in one statement, so one snapshot: exact, and as fresh as
 * the raw tables.
 *
 * A report over [from, to) splits the period at UTC day boundaries: [from, r1) and [r2, to), parts
 * of a day, are aggregated from the raw rows; [r1, r2) from the summaries plus the rows the fold has
 * not reached:
 * - the affiliates report: the running totals per affiliate at the month boundary nearest to r1
 *   and to r2 (report_affiliate_totals), plus or minus the days between each boundary and its month
 *   (report_affiliate_days): at most half a month of day rows at each end, however long the period;
 * - the time series: the days (report_program_days), and the entries deferred by the fold (still
 *   pending, approving themselves later) summed per program, day and day of approval
 *   (report_deferred_days): pending or approved by that day alone, except today's, read one by one;
 * - clicks, customers, conversions and commissions created since the watermark (folded_before),
 *   found by their BRIN index on created_at (the last pages of each table).
 */

/** The figures of a report row or point, as PostgreSQL sums them (counts and amounts as exact text). */
export interface FigureRow {
  currency: string;
  clicks: string;
  customers: string;
  conversions: string;
  revenue: string;
  refunded: string;
  pending: string;
  approved: string;
  paid: string;
  reversed: string;
  rejected: string;
  on_hold: string;
}

export interface AffiliateFigureRow extends FigureRow {
  affiliate_id: string;
  program_id: string;
}

export interface PointRow extends FigureRow {
  /** YYYY-MM-DD, UTC. */
  period: string;
}

export interface ReportWindow {
  organizationId: string;
  programId: string | null;
  currency: string | null;
  from: Date;
  to: Date;
  /** [r1, r2): the part read from summaries (aligned to their grain); r1 = r2 when none. */
  r1: Date;
  r2: Date;
}

export interface AffiliateCursor {
  revenue: string;
  affiliateId: string;
  currency: string;
}

const FIGURES = ['clicks', 'customers', 'conversions', 'revenue', 'refunded', 'pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'] as const;
const sums = (alias: string) => FIGURES.map((f) => `sum(${alias}.${f})::text as ${f}`).join(', ');
const figureList = (alias: string) => FIGURES.map((f) => `${alias}.${f}`).join(', ');
const zeroFigures = (from: number) =>
  FIGURES.slice(from)
    .map((f) => `${f === 'clicks' || f === 'customers' || f === 'conversions' ? '0::bigint' : '0::numeric'} as ${f}`)
    .join(', ');

/** A commission's amount in the column of its status (the effective one for live rows). */
const buckets = (status: string, amount: string) =>
  ['pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'].map((s) => `case when ${status} = '${s}' then ${amount} else 0::numeric end as ${s}`).join(', ');

/**
 * The live part of a report, as rows (affiliate_id, program_id, currency or null for clicks and
 * customers, at, figures...). Parameters: $1 organization, $4 from, $5 to, $6 r1, $7 r2.
 *
 * The scans of clicks and customers by created_at or occurred_at are in MATERIALIZED CTEs without
 * the organization's filter, so that the only index they can use is their BRIN (never an
 * (organization_id, ...) btree walked across the whole organization); the organization is filtered
 * right after. Conversions and commissions have (organization_id, occurred_at / created_at)
 * btrees, used as such; a sale entry's conversion is a lateral primary-key lookup (never a join
 * that could be planned over every conversion). The plan does not depend on statistics (the caller
 * also disables sequential scans). `deferred`: the deferred entries of [r1, r2) one by one (`list`,
 * the affiliates report), or only those approving themselves today (`days`, the time series, which
 * reads the others summed from report_deferred_days).
 */
const liveCtes = (deferred: 'list' | 'days') => `
st as materialized (select folded_before as w, totals_through as through from report_fold_state),
tail_clicks as materialized (
  select organization_id, affiliate_id, program_id, occurred_at from clicks where created_at >= (select w from st)),
edge_clicks as materialized (
  select organization_id, affiliate_id, program_id, occurred_at from clicks
  where (occurred_at >= $4 and occurred_at < $6) or (occurred_at >= $7 and occurred_at < $5)),
tail_customers as materialized (
  select organization_id, affiliate_id, program_id, created_at from customers where created_at >= (select w from st)),
edge_customers as materialized (
  select organization_id, affiliate_id, program_id, created_at from customers
  where (created_at >= $4 and created_at < $6) or (created_at >= $7 and created_at < $5)),
tail_conversions as materialized (
  select organization_id, affiliate_id, program_id, currency, occurred_at, amount, refunded_amount from conversions where created_at >= (select w from st)),
edge_conversions as materialized (
  select id, affiliate_id, program_id, currency, occurred_at, amount, refunded_amount from conversions
  where organization_id = $1 and occurred_at >= $4 and occurred_at < $6
  union all
  select id, affiliate_id, program_id, currency, occurred_at, amount, refunded_amount from conversions
  where organization_id = $1 and occurred_at >= $7 and occurred_at < $5),
tail_commissions as materialized (
  select k.affiliate_id, k.program_id, k.currency, k.amount, k.status, k.approves_at, coalesce(v.occurred_at, k.created_at) as at
  from commissions k
  left join lateral (select v.occurred_at from conversions v where v.id = k.conversion_id and v.organization_id = k.organization_id) v on true
  where k.organization_id = $1 and k.created_at >= (select w from st)),
edge_adjustments as materialized (
  select affiliate_id, program_id, currency, amount, status, approves_at, created_at from commissions
  where organization_id = $1 and type = 'adjustment' and created_at >= $4 and created_at < $6
  union all
  select affiliate_id, program_id, currency, amount, status, approves_at, created_at from commissions
  where organization_id = $1 and type = 'adjustment' and created_at >= $7 and created_at < $5),
live_commissions as (
  select k.affiliate_id, k.program_id, k.currency::text as currency, k.at, k.amount, k.status, k.approves_at
  from tail_commissions k
  where k.at >= $6 and k.at < $7
  union all
  select d.affiliate_id, d.program_id, d.currency, d.period_at, d.amount, 'pending'::text, d.approves_at
  from report_deferred_commissions d
  where d.organization_id = $1 and d.period_at >= $6 and d.period_at < $7${
    deferred === 'days' ? ` and d.approves_at >= ${TODAY}::timestamp at time zone 'UTC' and d.approves_at < (${TODAY} + 1)::timestamp at time zone 'UTC'` : ''
  }
  union all
  select k.affiliate_id, k.program_id, k.currency::text, c.occurred_at, k.amount, k.status, k.approves_at
  from edge_conversions c
  cross join lateral (select k.* from commissions k where k.conversion_id = c.id) k
  union all
  select k.affiliate_id, k.program_id, k.currency::text, k.created_at, k.amount, k.status, k.approves_at
  from edge_adjustments k
),
live as (
  select affiliate_id, program_id, null::text as currency, occurred_at as at, 1::bigint as clicks, ${zeroFigures(1)}
  from tail_clicks where organization_id = $1 and occurred_at >= $6 and occurred_at < $7
  union all
  select affiliate_id, program_id, null::text, occurred_at, 1::bigint, ${zeroFigures(1)} from edge_clicks where organization_id = $1
  union all
  select affiliate_id, program_id, null::text, created_at, 0::bigint, 1::bigint, ${zeroFigures(2)}
  from tail_customers where organization_id = $1 and created_at >= $6 and created_at < $7
  union all
  select affiliate_id, program_id, null::text, created_at, 0::bigint, 1::bigint, ${zeroFigures(2)} from edge_customers where organization_id = $1
  union all
  select affiliate_id, program_id, currency::text, occurred_at, 0::bigint, 0::bigint, 1::bigint, amount, refunded_amount, ${zeroFigures(5)}
  from tail_conversions where organization_id = $1 and occurred_at >= $6 and occurred_at < $7
  union all
  select affiliate_id, program_id, currency::text, occurred_at, 0::bigint, 0::bigint, 1::bigint, amount, refunded_amount, ${zeroFigures(5)} from edge_conversions
  union all
  select affiliate_id, program_id, currency, at, 0::bigint, 0::bigint, 0::bigint, 0::numeric, 0::numeric, ${buckets(effectiveStatusSql('lc'), 'lc.amount')}
  from live_commissions lc
),
programs_of as materialized (select id, currency::text as currency from programs where organization_id = $1)`;

/** Today's UTC date, as the statement sees it (the transaction's now(), as effectiveStatusSql). */
const TODAY = `(now() at time zone 'UTC')::date`;

/** The reports module's only way to the database. */
export class ReportsRepository {
  constructor(private readonly orm: MikroORM) {}

  /** Whether the program is this organization's. */
  async programExists(organizationId: string, programId: string): Promise<boolean> {
    const row = await Sql.of(this.orm).one(`select 1 as found from programs where organization_id = ? and id = ?`, [organizationId, programId]);
    return row !== undefined;
  }

  /**
   * Statement settings for the report's one statement, local to its transaction (nothing stays
   * on the connection): no sequential scan of a raw table, whatever the statistics say, and room
   * for the aggregation in memory.
   */
  private reading<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    return Sql.of(this.orm).transaction(async (sql) => {
      await sql.rows(READING_SETTINGS);
      return fn(sql);
    });
  }

  /**
   * One page of the affiliates report, ranked by revenue. Its whole months are the difference of
   * two boundaries of report_affiliate_totals (two rows per affiliate, however long the period);
   * every (affiliate, currency) of the period is ranked by revenue, then the page's rows summed.
   */
  affiliatesPage(window: ReportWindow, after: AffiliateCursor | undefined, limit: number): Promise<AffiliateFigureRow[]> {
    const { text, values } = affiliatesStatement(window, after, limit);
    return this.reading((sql) => sql.rows<AffiliateFigureRow>(text, values));
  }

  /** The time series: one point per period and currency, periods without activity as zeros. */
  timeseries(window: ReportWindow, interval: 'day' | 'week' | 'month'): Promise<PointRow[]> {
    const { text, values } = timeseriesStatement(window, interval);
    return this.reading((sql) => sql.rows<PointRow>(text, values));
  }

  /**
   * One fold step (report_fold in the migration), if no other instance is folding: answers the new
   * watermark, or undefined when another instance holds the fold. Its own transaction, with a
   * statement timeout of its own (a catch-up step may take longer than a request's statement).
   */
  fold(lagSeconds: number, spanSeconds: number): Promise<Date | undefined> {
    return Sql.of(this.orm).transaction(async (sql) => {
      const [lock] = await sql.rows<{ locked: boolean }>(`select pg_try_advisory_xact_lock(7262010002) as locked, set_config('statement_timeout', '60s', true), set_config('jit', 'off', true)`);
      if (!lock?.locked) return undefined;
      // New BRIN ranges summarized here, not by VACUUM (autovacuum may be off); needs the tables'
      // owner, as the migrations are. The plan of the fold's scans by created_at relies on it.
      await sql.transaction((s) => s.rows(`select brin_summarize_new_values(i::regclass) from unnest(?::text[]) i`, [BRIN_INDEXES])).catch(() => undefined);
      const [row] = await sql.rows<{ w: Date }>(`select report_fold(make_interval(secs => ?), make_interval(secs => ?)) as w`, [lagSeconds, spanSeconds]);
      return row!.w;
    });
  }

  /** The watermark and the time of the last fold. */
  async foldState(): Promise<{ folded_before: Date; folded_at: Date | null }> {
    return (await Sql.of(this.orm).one<{ folded_before: Date; folded_at: Date | null }>(`select folded_before, folded_at from report_fold_state`))!;
  }
}

/** The settings of a report's transaction (see ReportsRepository.reading). */
export const READING_SETTINGS = `select set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true), set_config('work_mem', '64MB', true)`;

const BRIN_INDEXES = ['clicks_created_at_brin', 'clicks_occurred_at_brin', 'customers_created_at_brin', 'conversions_created_at_brin', 'commissions_created_at_brin'];

const utcDate = (d: Date): string => d.toISOString().slice(0, 10);

/**
 * A boundary of the affiliates report's period inside a month, as the nearer month boundary
 * (`month`) plus (`sign` 1) or minus (-1) the days in [daysFrom, daysTo) between the two: at most
 * half a month of report_affiliate_days. A month boundary is itself, with no days.
 */
export function dayBoundary(d: Date): { month: Date; sign: 1 | -1; daysFrom: Date; daysTo: Date } {
  const month = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  const next = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  return d.getTime() - month.getTime() <= next.getTime() - d.getTime() ? { month, sign: 1, daysFrom: month, daysTo: d } : { month: next, sign: -1, daysFrom: d, daysTo: next };
}

/**
 * The folded figures of (affiliate, currency) keys over [r1, r2): the running totals at the
 * boundaries' months (report_affiliate_totals, two rows per key, skipped when both boundaries
 * round to the same month) and the days between each boundary and its month (report_affiliate_days),
 * signed. `columns` are the figures wanted; `filter` narrows every part (e.g. to a page's affiliates).
 */
function foldedParts(columns: readonly string[], filter: string): string {
  const cols = (alias: string, sign: string) => columns.map((c) => `${sign} * ${alias}.${c} as ${c}`).join(', ');
  return `
    select t.affiliate_id, t.program_id, t.currency, ${cols('t', '1')} from report_affiliate_totals t
    where t.organization_id = $1 and t.before = (select b2 from bounds) and (select b1 <> b2 from bounds) ${filter.replaceAll('%', 't')}
    union all
    select t.affiliate_id, t.program_id, t.currency, ${cols('t', '-1')} from report_affiliate_totals t
    where t.organization_id = $1 and t.before = (select b1 from bounds) and (select b1 <> b2 from bounds) ${filter.replaceAll('%', 't')}
    union all
    select d.affiliate_id, d.program_id, d.currency, ${cols('d', '$17::int')} from report_affiliate_days d
    where d.organization_id = $1 and d.day >= $18::date and d.day < $19::date ${filter.replaceAll('%', 'd')}
    union all
    select d.affiliate_id, d.program_id, d.currency, ${cols('d', '-$14::int')} from report_affiliate_days d
    where d.organization_id = $1 and d.day >= $15::date and d.day < $16::date ${filter.replaceAll('%', 'd')}`;
}

/** The affiliates report's statement (exported for the benchmark's EXPLAIN). */
export function affiliatesStatement(window: ReportWindow, after: AffiliateCursor | undefined, limit: number): { text: string; values: unknown[] } {
    const programFilter = 'and ($2::uuid is null or %.program_id = $2::uuid)';
    const text = `
with ${liveCtes('list')},
bounds as materialized (select least($8::date, through) as b1, least($9::date, through) as b2 from st),
ranked_totals as materialized (
  select f.affiliate_id, min(f.program_id::text)::uuid as program_id, nullif(f.currency, '') as currency, sum(f.revenue) as revenue
  from (${foldedParts(['entries', 'revenue'], programFilter)}
  ) f
  group by f.affiliate_id, f.currency
  having sum(f.entries) > 0
),
keyed as (
  select x.affiliate_id, coalesce(x.currency, p.currency) as currency, x.revenue
  from (
    select t.affiliate_id, t.program_id, t.currency, t.revenue from ranked_totals t
    union all
    select l.affiliate_id, l.program_id, l.currency, l.revenue from live l where ($2::uuid is null or l.program_id = $2::uuid)
  ) x
  join programs_of p on p.id = x.program_id
),
ranked as (
  select affiliate_id, currency, sum(revenue) as revenue from keyed
  where ($3::text is null or currency = $3::text)
  group by affiliate_id, currency
),
page as (
  select affiliate_id, currency, revenue from ranked
  where $10::numeric is null or revenue < $10::numeric or (revenue = $10::numeric and (affiliate_id, currency) > ($11::uuid, $12::text))
  order by revenue desc, affiliate_id, currency
  limit $13
),
page_affiliates as materialized (select array_agg(distinct affiliate_id) as ids from page),
figures as (
  select x.affiliate_id, coalesce(x.currency, p.currency) as currency, min(x.program_id::text) as program_id, ${sums('x')}
  from (
    select f.affiliate_id, f.program_id, nullif(f.currency, '') as currency, ${FIGURES.map((c) => `sum(f.${c}) as ${c}`).join(', ')}
    from (${foldedParts(['entries', ...FIGURES], `${programFilter} and %.affiliate_id = any ((select ids from page_affiliates)::uuid[])`)}
    ) f
    group by f.affiliate_id, f.program_id, f.currency
    having sum(f.entries) > 0
    union all
    select l.affiliate_id, l.program_id, l.currency, ${figureList('l')}
    from live l where l.affiliate_id in (select affiliate_id from page) and ($2::uuid is null or l.program_id = $2::uuid)
  ) x
  join programs_of p on p.id = x.program_id
  group by 1, 2
)
select f.* from page join figures f on f.affiliate_id = page.affiliate_id and f.currency = page.currency
order by page.revenue desc, page.affiliate_id, page.currency`;
    const b1 = dayBoundary(window.r1);
    const b2 = dayBoundary(window.r2);
    const values = [
      window.organizationId,
      window.programId,
      window.currency,
      window.from,
      window.to,
      window.r1,
      window.r2,
      utcDate(b1.month),
      utcDate(b2.month),
      after?.revenue ?? null,
      after?.affiliateId ?? null,
      after?.currency ?? null,
      limit,
      b1.sign,
      utcDate(b1.daysFrom),
      utcDate(b1.daysTo),
      b2.sign,
      utcDate(b2.daysFrom),
      utcDate(b2.daysTo),
    ];
  return { text, values };
}

/** The time series' statement (exported for the benchmark's EXPLAIN). */
export function timeseriesStatement(window: ReportWindow, interval: 'day' | 'week' | 'month'): { text: string; values: unknown[] } {
    const text = `
with ${liveCtes('days')},
rows_of as (
  select x.period, coalesce(x.currency, p.currency) as currency, ${figureList('x')}
  from (
    select date_trunc($10::text, r.day::timestamp) as period, r.program_id, nullif(r.currency, '') as currency, ${figureList('r')}
    from report_program_days r
    where r.organization_id = $1 and r.day >= $8::date and r.day < $9::date and ($2::uuid is null or r.program_id = $2::uuid)
    union all
    select date_trunc($10::text, l.at at time zone 'UTC'), l.program_id, l.currency, ${figureList('l')}
    from live l where ($2::uuid is null or l.program_id = $2::uuid)
    union all
    select date_trunc($10::text, d.day::timestamp), d.program_id, d.currency, 0::bigint, 0::bigint, 0::bigint, 0::numeric, 0::numeric,
      case when d.approves_on > ${TODAY} then d.amount else 0::numeric end, case when d.approves_on < ${TODAY} then d.amount else 0::numeric end,
      ${zeroFigures(7)}
    from report_deferred_days d
    where d.organization_id = $1 and d.day >= $8::date and d.day < $9::date and d.approves_on <> ${TODAY} and ($2::uuid is null or d.program_id = $2::uuid)
  ) x
  join programs_of p on p.id = x.program_id
),
agg as (
  select period, currency, ${sums('g')} from rows_of g
  where ($3::text is null or currency = $3::text)
  group by period, currency
),
currencies as (
  select currency from agg
  union
  select currency from programs_of where $3::text is null and ($2::uuid is null or id = $2::uuid)
  union
  select $3::text where $3::text is not null
),
periods as (
  select generate_series(date_trunc($10::text, $4::timestamptz at time zone 'UTC'), ($5::timestamptz at time zone 'UTC') - interval '1 microsecond', ('1 ' || $10::text)::interval) as period
)
select to_char(pe.period, 'YYYY-MM-DD') as period, c.currency,
  ${FIGURES.map((f) => `coalesce(a.${f}, '0') as ${f}`).join(', ')}
from periods pe cross join currencies c
left join agg a on a.period = pe.period and a.currency = c.currency
order by pe.period, c.currency`;
    const values = [
      window.organizationId,
      window.programId,
      window.currency,
      window.from,
      window.to,
      window.r1,
      window.r2,
      utcDate(window.r1),
      utcDate(window.r2),
      interval,
    ];
  return { text, values };
}
