import { effectiveStatusSql } from '../commissions/commission-lifecycle.js';
import type { AffiliateCursor, ReportWindow } from './reports.repository.js';

/**
 * The reports' statements (ReportsRepository runs them; the benchmark prints their plans): the live
 * part shared by both reports, the affiliates report and the time series. See reports.repository.ts
 * for the read model they combine.
 */

const FIGURES = [
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
 * customers, at, figures..., entries: 1, or -1 for a row subtracted at an edge, 0 for a correction).
 * Parameters: $1 organization, $4 from, $5 to, $6 r1, $7 r2.
 *
 * The scans of clicks and customers by created_at or occurred_at are in MATERIALIZED CTEs without
 * the organization's filter, so that the only index they can use is their BRIN (never an
 * (organization_id, ...) btree walked across the whole organization); the organization is filtered
 * right after. Conversions and commissions have (organization_id, occurred_at / created_at)
 * btrees, used as such; a sale entry's conversion is a lateral primary-key lookup, and a
 * conversion's entries lateral lookups of the two partial indexes by conversion (sales, clawbacks):
 * never a join planned over every row of the other table (a hash join over 2 M entries cost 3 s).
 * No planner setting steers the plan: indexes and the statement's shape do (ANALYZE after a bulk load).
 *
 * The entries still in their hold are in the summaries as pending (the
 * read model's functions: baseline/report-functions.ts); `due` corrects those whose approves_at has passed since the
 * last fold (still listed in report_deferred_commissions: a handful, by its index on approves_at):
 * pending minus their amount, approved plus it. Such a row counts as an entry of its key in the
 * affiliates report's ranking, which changes nothing: the entry itself is folded in the same period.
 */
/**
 * The raw parts at the ends of a period: [from, r1) and [r2, to), or, where the summaries' span
 * reaches past an end to the nearer midnight (reports.service.ts summarySpan), [r1, from) and
 * [to, r2), subtracted: each edge row carries its sign.
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

const liveCtes = (scope: (column: string) => string = () => '') => `
st as materialized (select folded_before as w, totals_through as through from report_fold_state),
tail_clicks as materialized (
  select organization_id, affiliate_id, program_id, occurred_at from clicks where created_at >= (select w from st)),
edge_clicks as materialized (
  select organization_id, affiliate_id, program_id, occurred_at, case when occurred_at < ${E1_HI} then ${S1} else ${S2} end as sign from clicks
  where (${E1} and occurred_at >= ${E1_LO} and occurred_at < ${E1_HI}) or (${E2} and occurred_at >= ${E2_LO} and occurred_at < ${E2_HI})),
tail_customers as materialized (
  select organization_id, affiliate_id, program_id, created_at from customers where created_at >= (select w from st)),
edge_customers as materialized (
  select organization_id, affiliate_id, program_id, created_at, case when created_at < ${E1_HI} then ${S1} else ${S2} end as sign from customers
  where (${E1} and created_at >= ${E1_LO} and created_at < ${E1_HI}) or (${E2} and created_at >= ${E2_LO} and created_at < ${E2_HI})),
tail_conversions as materialized (
  select organization_id, affiliate_id, program_id, currency, occurred_at, amount, refunded_amount from conversions where created_at >= (select w from st)),
edge_conversions as materialized (
  select id, affiliate_id, program_id, currency, occurred_at, amount, refunded_amount, ${S1} as sign from conversions
  where organization_id = $1 and occurred_at >= ${E1_LO} and occurred_at < ${E1_HI}
  union all
  select id, affiliate_id, program_id, currency, occurred_at, amount, refunded_amount, ${S2} from conversions
  where organization_id = $1 and occurred_at >= ${E2_LO} and occurred_at < ${E2_HI}),
tail_commissions as materialized (
  select k.affiliate_id, k.program_id, k.currency, k.amount, k.status, k.approves_at, coalesce(v.occurred_at, k.created_at) as at
  from commissions k
  left join lateral (select v.occurred_at from conversions v where v.id = k.conversion_id and v.organization_id = k.organization_id) v on true
  where k.organization_id = $1 and k.created_at >= (select w from st)),
edge_adjustments as materialized (
  select affiliate_id, program_id, currency, amount, status, approves_at, created_at, ${S1} as sign from commissions
  where organization_id = $1 and type = 'adjustment' and created_at >= ${E1_LO} and created_at < ${E1_HI}
  union all
  select affiliate_id, program_id, currency, amount, status, approves_at, created_at, ${S2} from commissions
  where organization_id = $1 and type = 'adjustment' and created_at >= ${E2_LO} and created_at < ${E2_HI}),
due as materialized (
  select organization_id, affiliate_id, program_id, currency, period_at, amount from report_deferred_commissions where commission_due('pending', approves_at, now())),
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
  select k.affiliate_id, k.program_id, k.currency::text as currency, k.at, k.amount, k.status, k.approves_at, 1 as sign
  from tail_commissions k
  where k.at >= $6 and k.at < $7 ${scope('k.affiliate_id')}

  union all
  select k.affiliate_id, k.program_id, k.currency::text, c.occurred_at, k.amount, k.status, k.approves_at, c.sign
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
  select affiliate_id, program_id, null::text as currency, occurred_at as at, 1::bigint as clicks, ${zeroFigures(1)}, 1::bigint as entries
  from tail_clicks where organization_id = $1 and occurred_at >= $6 and occurred_at < $7 ${scope('affiliate_id')}
  union all
  select affiliate_id, program_id, null::text, occurred_at, sign::bigint, ${zeroFigures(1)}, sign::bigint from edge_clicks where organization_id = $1 ${scope('affiliate_id')}
  union all
  select affiliate_id, program_id, null::text, created_at, 0::bigint, 1::bigint, ${zeroFigures(2)}, 1::bigint
  from tail_customers where organization_id = $1 and created_at >= $6 and created_at < $7 ${scope('affiliate_id')}
  union all
  select affiliate_id, program_id, null::text, created_at, 0::bigint, sign::bigint, ${zeroFigures(2)}, sign::bigint from edge_customers where organization_id = $1 ${scope('affiliate_id')}
  union all
  select affiliate_id, program_id, currency::text, occurred_at, 0::bigint, 0::bigint, 1::bigint, amount, refunded_amount, ${zeroFigures(5)}, 1::bigint
  from tail_conversions where organization_id = $1 and occurred_at >= $6 and occurred_at < $7 ${scope('affiliate_id')}
  union all
  select affiliate_id, program_id, currency::text, occurred_at, 0::bigint, 0::bigint, sign::bigint, sign * amount, sign * refunded_amount, ${zeroFigures(5)}, sign::bigint
  from edge_conversions where true ${scope('affiliate_id')}
  union all
  select affiliate_id, program_id, currency, at, 0::bigint, 0::bigint, 0::bigint, 0::numeric, 0::numeric, ${buckets(effectiveStatusSql('lc'), 'lc.sign * lc.amount')}, sign::bigint
  from ${name}_commissions lc
  union all
  select affiliate_id, program_id, currency, period_at, 0::bigint, 0::bigint, 0::bigint, 0::numeric, 0::numeric, -amount, amount, ${zeroFigures(7)}, 0::bigint
  from due where organization_id = $1 and period_at >= $6 and period_at < $7 ${scope('affiliate_id')}
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
 * signed. `columns` are the figures wanted; `filter` narrows every part (e.g. to a page's affiliates);
 * `totals` may be report_affiliate_revenue, the narrow copy of the revenue of the keys with a currency.
 */
function foldedParts(columns: readonly string[], filter: string, totals = 'report_affiliate_totals'): string {
  const cols = (alias: string, sign: string) => columns.map((c) => `${sign} * ${alias}.${c} as ${c}`).join(', ');
  return `
    select t.affiliate_id, t.program_id, t.currency, ${cols('t', '1')} from ${totals} t
    where t.organization_id = $1 and t.before = (select b2 from bounds) and (select b1 <> b2 from bounds) ${filter.replaceAll('%', 't')}
    union all
    select t.affiliate_id, t.program_id, t.currency, ${cols('t', '-1')} from ${totals} t
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
 * carried by rows with a currency (conversions), so the month boundaries are read from
 * report_affiliate_revenue (those keys' revenue alone, a tenth of the pages of
 * report_affiliate_totals), the day rows of clicks and customers (currency '') are skipped inside
 * the index (`currency > ''`, an index condition of the primary key), and the live part is the period's conversions alone (no entry
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
with ${liveCtes((column) => `and ($20::uuid[] is null or ${column} = any ($20::uuid[]))`)},
bounds as materialized (select least($8::date, through) as b1, least($9::date, through) as b2 from st),
by_revenue as (
  select x.affiliate_id, x.currency, sum(x.revenue) as revenue
  from (
    select f.affiliate_id, f.program_id, f.currency, f.revenue
    from (${foldedParts(['revenue'], `${programFilter} and %.currency > ''`, 'report_affiliate_revenue')}
    ) f
    union all
    select c.affiliate_id, c.program_id, c.currency::text, c.amount from tail_conversions c
    where c.organization_id = $1 and c.occurred_at >= $6 and c.occurred_at < $7 ${programFilter.replaceAll('%', 'c')}
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
  ];
  return { text, values };
}

/** The time series' statement (exported for the benchmark's EXPLAIN). */
export function timeseriesStatement(
  window: ReportWindow,
  interval: 'day' | 'week' | 'month',
): { text: string; values: unknown[] } {
  const text = `
with ${liveCtes()},
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
