import { effectiveStatusSql } from '../commissions/commission-lifecycle.js';
import type { AffiliateCursor, ReportWindow } from './reports.repository.js';
import { DELTA_FIGURES } from './report-contributions.js';

/**
 * The reports' statements (ReportsRepository runs them; the benchmark prints their plans): the live
 * part shared by both reports, the affiliates report and the time series. See reports.repository.ts
 * for the read model they combine.
 */

/** The figures a report answers: the deltas' (report-contributions.ts), without their entries count. */
const FIGURES = DELTA_FIGURES.filter((f) => f !== 'entries');
const sums = (alias: string) => FIGURES.map((f) => `sum(${alias}.${f})::text as ${f}`).join(', ');
const figureList = (alias: string) => FIGURES.map((f) => `${alias}.${f}`).join(', ');
const zeroFigures = (from: number) =>
  FIGURES.slice(from)
    .map((f) => `${f === 'clicks' || f === 'customers' || f === 'conversions' ? '0::bigint' : '0::numeric'} as ${f}`)
    .join(', ');

/** A commission's amount in the column of its status (the effective one for live rows). */
const buckets = (status: string, amount: string) =>
  ['pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold']
    .map((s) => `case when ${status} = '${s}' then ${amount} else 0::numeric end as ${s}`)
    .join(', ');

/**
 * The live part of a report, as rows (affiliate_id, program_id, currency or null for clicks and
 * customers, at, figures..., entries: 1, or -1 for a row subtracted at an edge). Parameters: $1
 * organization, $4 from, $5 to, $6 r1, $7 r2; `d1`, `d2` the parameters of r1 and r2 as dates.
 *
 * - `deltas`: the organization's deltas not folded yet (report-contributions.ts) whose days are in
 *   [r1, r2), due ones only: an entry's scheduled approval counts from its approves_at on (a held
 *   entry is pending until then, as commission_due says).
 * - The edges: the raw rows of [from, r1) and [r2, to), or, where the summaries' span reaches past
 *   an end to the nearer midnight (reports.service.ts summarySpan), of [r1, from) and [to, r2),
 *   subtracted: each edge row carries its sign. Clicks and customers are found by their BRIN
 *   indexes (occurred_at, created_at), conversions and adjustments by their (organization_id,
 *   occurred_at / created_at) btrees; a conversion's entries are lateral lookups of the two partial
 *   indexes by conversion (sales, clawbacks), never a join planned over every entry.
 * Every part is filtered by the organization. No planner setting steers the plan: indexes and the
 * statement's shape do (ANALYZE after a bulk load).
 */
const E1_LO = 'least($4::timestamptz, $6::timestamptz)';
const E1_HI = 'greatest($4::timestamptz, $6::timestamptz)';
const S1 = '(case when $4::timestamptz <= $6::timestamptz then 1 else -1 end)';
const E2_LO = 'least($7::timestamptz, $5::timestamptz)';
const E2_HI = 'greatest($7::timestamptz, $5::timestamptz)';
const S2 = '(case when $7::timestamptz <= $5::timestamptz then 1 else -1 end)';
/** Whether an edge is not empty: folded to false with the statement's values, so that an empty edge costs no scan (a BRIN range around an instant still matches a dozen block ranges). */
const E1 = `(${E1_LO} < ${E1_HI})`;
const E2 = `(${E2_LO} < ${E2_HI})`;

const liveCtes = (d1: string, d2: string, scope: (column: string) => string = () => '') => `
st as materialized (select through from report_totals_through where organization_id = $1),
deltas as materialized (
  select affiliate_id, program_id, nullif(currency, '') as currency, day::timestamp at time zone 'UTC' as at, ${figureList('d')}, entries
  from report_deltas d where organization_id = $1 and due_at <= now() and day >= ${d1}::date and day < ${d2}::date),
edge_clicks as materialized (
  select affiliate_id, program_id, occurred_at, case when occurred_at < ${E1_HI} then ${S1} else ${S2} end as sign from clicks
  where organization_id = $1 and ((${E1} and occurred_at >= ${E1_LO} and occurred_at < ${E1_HI}) or (${E2} and occurred_at >= ${E2_LO} and occurred_at < ${E2_HI}))),
edge_customers as materialized (
  select affiliate_id, program_id, created_at, case when created_at < ${E1_HI} then ${S1} else ${S2} end as sign from customers
  where organization_id = $1 and ((${E1} and created_at >= ${E1_LO} and created_at < ${E1_HI}) or (${E2} and created_at >= ${E2_LO} and created_at < ${E2_HI}))),
edge_conversions as materialized (
  select id, affiliate_id, program_id, currency, occurred_at, amount, refunded_amount, ${S1} as sign from conversions
  where organization_id = $1 and occurred_at >= ${E1_LO} and occurred_at < ${E1_HI}
  union all
  select id, affiliate_id, program_id, currency, occurred_at, amount, refunded_amount, ${S2} from conversions
  where organization_id = $1 and occurred_at >= ${E2_LO} and occurred_at < ${E2_HI}),
edge_adjustments as materialized (
  select affiliate_id, program_id, currency, amount, status, approves_at, created_at, ${S1} as sign from commissions
  where organization_id = $1 and type = 'adjustment' and created_at >= ${E1_LO} and created_at < ${E1_HI}
  union all
  select affiliate_id, program_id, currency, amount, status, approves_at, created_at, ${S2} from commissions
  where organization_id = $1 and type = 'adjustment' and created_at >= ${E2_LO} and created_at < ${E2_HI}),
${liveRows('live', scope)},
programs_of as materialized (select id, currency::text as currency from programs where organization_id = $1)`;

/**
 * The live rows (affiliate_id, program_id, currency or null for clicks and customers, at, figures...)
 * as the CTEs `${name}_commissions` and `${name}`, each part narrowed by `scope` (a condition on an
 * affiliate_id column, '' for none): the affiliates report reads them only for its page's affiliates,
 * so the entries of the edge conversions of other affiliates are never looked up.
 */
const liveRows = (name: string, scope: (column: string) => string) => `
${name}_commissions as (
  select k.affiliate_id, k.program_id, k.currency::text as currency, c.occurred_at as at, k.amount, k.status, k.approves_at, c.sign
  from edge_conversions c
  cross join lateral (
    select k.* from commissions k where k.conversion_id = c.id and k.organization_id = $1 and k.type = 'sale'
    union all
    select k.* from commissions k where k.conversion_id = c.id and k.organization_id = $1 and k.type = 'clawback') k
  where true ${scope('c.affiliate_id')}
  union all
  select k.affiliate_id, k.program_id, k.currency::text, k.created_at, k.amount, k.status, k.approves_at, k.sign
  from edge_adjustments k where true ${scope('k.affiliate_id')}
),
${name} as (
  select affiliate_id, program_id, currency, at, ${FIGURES.join(', ')}, entries from deltas where true ${scope('affiliate_id')}
  union all
  select affiliate_id, program_id, null::text, occurred_at, sign::bigint, ${zeroFigures(1)}, sign::bigint from edge_clicks where true ${scope('affiliate_id')}
  union all
  select affiliate_id, program_id, null::text, created_at, 0::bigint, sign::bigint, ${zeroFigures(2)}, sign::bigint from edge_customers where true ${scope('affiliate_id')}
  union all
  select affiliate_id, program_id, currency::text, occurred_at, 0::bigint, 0::bigint, sign::bigint, sign * amount, sign * refunded_amount, ${zeroFigures(5)}, sign::bigint
  from edge_conversions where true ${scope('affiliate_id')}
  union all
  select affiliate_id, program_id, currency, at, 0::bigint, 0::bigint, 0::bigint, 0::numeric, 0::numeric, ${buckets(effectiveStatusSql('lc'), 'lc.sign * lc.amount')}, sign::bigint
  from ${name}_commissions lc
)`;

/** The settings of a report's transaction (see ReportsRepository.reading). */
export const READING_SETTINGS = `select set_config('jit', 'off', true), set_config('work_mem', '64MB', true), set_config('max_parallel_workers_per_gather', '0', true)`;

const utcDate = (d: Date): string => d.toISOString().slice(0, 10);

/**
 * A boundary of the affiliates report's period inside a month, as the nearer month boundary
 * (`month`) plus (`sign` 1) or minus (-1) the days in [daysFrom, daysTo) between the two: at most
 * half a month of report_affiliate_days. A month boundary is itself, with no days.
 */
export function dayBoundary(d: Date): { month: Date; sign: 1 | -1; daysFrom: Date; daysTo: Date } {
  const month = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  const next = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  return d.getTime() - month.getTime() <= next.getTime() - d.getTime()
    ? { month, sign: 1, daysFrom: month, daysTo: d }
    : { month: next, sign: -1, daysFrom: d, daysTo: next };
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

/**
 * The affiliates report's statement (exported for the benchmark's EXPLAIN).
 *
 * The page is ranked in two tries. First on revenue alone (`by_revenue`): revenue is only ever
 * carried by rows with a currency (conversions), so the month boundaries are read by an index-only
 * scan of report_affiliate_totals_revenue_idx (partial: currency > '', with program_id and
 * revenue included), the day rows of clicks and customers (currency '') are skipped, and the live
 * part is the period's conversions and deltas with a currency alone (no entry
 * looked up). Every (affiliate, currency) with revenue > 0 ranks before any without (revenue is never
 * negative), so when that try fills the page, it is the page. Otherwise (the last keys, those with
 * activity but no revenue, or a list of affiliates: `filled` false) the full ranking runs, every folded
 * and live row of the period, as before; its subtree is not executed when the first try filled the
 * page (a one-time filter). The figures are then summed for the page's affiliates only, their live
 * rows included (`live_page`: the entries of the other affiliates' edge conversions are not read).
 */
export function affiliatesStatement(
  window: ReportWindow,
  affiliateIds: readonly string[] | null,
  after: AffiliateCursor | undefined,
  limit: number,
): { text: string; values: unknown[] } {
  // $20: the affiliates asked for (null: all), in every part, so the folded rows are read by affiliate.
  const programFilter =
    'and ($2::uuid is null or %.program_id = $2::uuid) and ($20::uuid[] is null or %.affiliate_id = any ($20::uuid[]))';
  const text = `
with ${liveCtes('$21', '$22', (column) => `and ($20::uuid[] is null or ${column} = any ($20::uuid[]))`)},
bounds as materialized (select least($8::date, (select through from st)) as b1, least($9::date, (select through from st)) as b2),
by_revenue as (
  select x.affiliate_id, x.currency, sum(x.revenue) as revenue
  from (
    select f.affiliate_id, f.program_id, f.currency, f.revenue
    from (${foldedParts(['revenue'], `${programFilter} and %.currency > ''`)}
    ) f
    union all
    select d.affiliate_id, d.program_id, d.currency, d.revenue from deltas d
    where d.currency is not null ${programFilter.replaceAll('%', 'd')}
    union all
    select c.affiliate_id, c.program_id, c.currency::text, c.sign * c.amount from edge_conversions c
    where true ${programFilter.replaceAll('%', 'c')}
  ) x
  where ($3::text is null or x.currency = $3::text)
  group by x.affiliate_id, x.currency
  having sum(x.revenue) > 0
),
page_by_revenue as materialized (
  select affiliate_id, currency, revenue from by_revenue
  where $10::numeric is null or revenue < $10::numeric or (revenue = $10::numeric and (affiliate_id, currency) > ($11::uuid, $12::text))
  order by revenue desc, affiliate_id, currency
  limit $13
),
-- Narrowed to a list of affiliates, the full ranking of those is cheap (their rows by index) and
-- often needed (a listed affiliate without revenue in the period): the first one is not tried.
filled as materialized (select case when $20::uuid[] is null then (select count(*) >= $13 from page_by_revenue) else false end as filled),
keyed as (
  select x.affiliate_id, coalesce(x.currency, p.currency) as currency, x.entries, x.revenue
  from (
    select f.affiliate_id, f.program_id, nullif(f.currency, '') as currency, f.entries, f.revenue
    from (${foldedParts(['entries', 'revenue'], programFilter)}
    ) f
    union all
    select l.affiliate_id, l.program_id, l.currency, l.entries, l.revenue from live l
    where ($2::uuid is null or l.program_id = $2::uuid) and ($20::uuid[] is null or l.affiliate_id = any ($20::uuid[]))
  ) x
  join programs_of p on p.id = x.program_id
),
ranked as (
  select affiliate_id, currency, sum(revenue) as revenue from keyed
  where ($3::text is null or currency = $3::text)
  group by affiliate_id, currency
  having sum(entries) > 0
),
page as materialized (
  select affiliate_id, currency, revenue from page_by_revenue where (select filled from filled)
  union all
  select r.affiliate_id, r.currency, r.revenue from (
    select affiliate_id, currency, revenue from ranked
    where $10::numeric is null or revenue < $10::numeric or (revenue = $10::numeric and (affiliate_id, currency) > ($11::uuid, $12::text))
    order by revenue desc, affiliate_id, currency
    limit $13
  ) r
  where not (select filled from filled)
),
page_affiliates as materialized (select array_agg(distinct affiliate_id) as ids from page),
${liveRows('live_page', (column) => `and ${column} = any ((select ids from page_affiliates)::uuid[])`)},
figures as materialized (
  select x.affiliate_id, coalesce(x.currency, p.currency) as currency, min(x.program_id::text) as program_id, ${sums('x')}
  from (
    select f.affiliate_id, f.program_id, nullif(f.currency, '') as currency, ${FIGURES.map((c) => `sum(f.${c}) as ${c}`).join(', ')}
    from (${foldedParts(['entries', ...FIGURES], `${programFilter} and %.affiliate_id = any ((select ids from page_affiliates)::uuid[])`)}
    ) f
    group by f.affiliate_id, f.program_id, f.currency
    having sum(f.entries) > 0
    union all
    select l.affiliate_id, l.program_id, l.currency, ${figureList('l')}
    from live_page l where ($2::uuid is null or l.program_id = $2::uuid)
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
    affiliateIds,
    utcDate(window.r1),
    utcDate(window.r2),
  ];
  return { text, values };
}

/** The time series' statement (exported for the benchmark's EXPLAIN). */
export function timeseriesStatement(
  window: ReportWindow,
  interval: 'day' | 'week' | 'month',
): { text: string; values: unknown[] } {
  const text = `
with ${liveCtes('$8', '$9')},
rows_of as (
  select x.period, coalesce(x.currency, p.currency) as currency, ${figureList('x')}
  from (
    select date_trunc($10::text, r.day::timestamp) as period, r.program_id, nullif(r.currency, '') as currency, ${figureList('r')}
    from report_program_days r
    where r.organization_id = $1 and r.day >= $8::date and r.day < $9::date and ($2::uuid is null or r.program_id = $2::uuid)
    union all
    select date_trunc($10::text, l.at at time zone 'UTC'), l.program_id, l.currency, ${figureList('l')}
    from live l where ($2::uuid is null or l.program_id = $2::uuid)
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
