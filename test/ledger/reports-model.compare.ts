import { CompiledQuery } from 'kysely';
import { expect } from 'vitest';
import type { World } from './reports-model.support.js';
const DAY = 86_400_000;

/**
 * The reports against a straight aggregation of the raw tables (reports-model.support.ts re-exports
 * these): the same figures per affiliate and currency, and per period, for periods aligned to the
 * summaries and not.
 */

export const NAIVE_ROWS = `
  select affiliate_id, program_id, null::text as currency, occurred_at as at, 1 as clicks, 0 as customers, 0 as conversions, 0::numeric as revenue, 0::numeric as refunded, null::text as status, 0::numeric as amount
  from clicks where organization_id = $1
  union all
  select affiliate_id, program_id, null, created_at, 0, 1, 0, 0, 0, null, 0 from customers where organization_id = $1
  union all
  select affiliate_id, program_id, currency::text, occurred_at, 0, 0, 1, amount, refunded_amount, null, 0 from conversions where organization_id = $1
  union all
  select k.affiliate_id, k.program_id, k.currency::text, coalesce(v.occurred_at, k.created_at), 0, 0, 0, 0, 0,
    case when k.status = 'pending' and k.approves_at <= now() then 'approved' else k.status end, k.amount
  from commissions k left join conversions v on v.id = k.conversion_id and v.organization_id = k.organization_id where k.organization_id = $1`;

export const NAIVE_SUMS = `sum(clicks)::int as clicks, sum(customers)::int as customers, sum(conversions)::int as conversions, sum(revenue)::text as revenue, sum(refunded)::text as refunded,
  ${['pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'].map((s) => `coalesce(sum(amount) filter (where status = '${s}'), 0)::text as ${s}`).join(', ')}`;

export interface NaiveRow {
  key: string;
  clicks: number;
  customers: number;
  conversions: number;
  revenue: string;
  refunded: string;
  pending: string;
  approved: string;
  paid: string;
  reversed: string;
  rejected: string;
  on_hold: string;
}

export function normalise(
  row:
    | NaiveRow
    | {
        key: string;
        clicks: number;
        customers: number;
        conversions: number;
        revenue: number;
        refunded: number;
        commissions: Record<string, number>;
      },
) {
  const c = 'commissions' in row ? row.commissions : row;
  return {
    key: row.key,
    figures: [
      row.clicks,
      row.customers,
      row.conversions,
      Number(row.revenue),
      Number(row.refunded),
      ...['pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'].map((s) =>
        Number((c as Record<string, unknown>)[s]),
      ),
    ],
  };
}

export async function naiveAffiliates(w: World, from: Date, to: Date) {
  // NAIVE_ROWS names the organization $1 (reports-migration.test.ts runs it on a pg client too).
  const rows: NaiveRow[] = await w.db.rows(
    CompiledQuery.raw(
      `select x.affiliate_id || ' ' || coalesce(x.currency, p.currency::text) as key, ${NAIVE_SUMS}
     from (${NAIVE_ROWS}) x join programs p on p.id = x.program_id and p.organization_id = $1
     where x.at >= $2 and x.at < $3 group by 1 order by 1`,
      [w.m.id, from, to],
    ),
  );
  return rows.map(normalise);
}

export async function naiveSeries(w: World, from: Date, to: Date, interval: string) {
  const rows: NaiveRow[] = await w.db.rows(
    CompiledQuery.raw(
      `select to_char(date_trunc($4, x.at at time zone 'UTC'), 'YYYY-MM-DD') || ' ' || coalesce(x.currency, p.currency::text) as key, ${NAIVE_SUMS}
     from (${NAIVE_ROWS}) x join programs p on p.id = x.program_id and p.organization_id = $1
     where x.at >= $2 and x.at < $3 group by 1 order by 1`,
      [w.m.id, from, to, interval],
    ),
  );
  return rows.map(normalise);
}

/** The figures of a report's row (an affiliate's, or a period's), as the API answers them. */
interface ReportFigures {
  clicks: number;
  customers: number;
  conversions: number;
  revenue: number;
  refunded: number;
  commissions: Record<string, number>;
}

export async function reportAffiliates(w: World, from: Date, to: Date, affiliateIds?: string[]) {
  const rows: (ReportFigures & { affiliate_id: string; currency: string })[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: any } = await w.m.api.get(
      `/api/reports/affiliates?from=${from.toISOString()}&to=${to.toISOString()}&limit=2${cursor ? `&cursor=${cursor}` : ''}${affiliateIds ? `&affiliate_id=${affiliateIds.join(',')}` : ''}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    rows.push(...res.body.data.affiliates);
    cursor = res.body.data.next_cursor;
  } while (cursor);
  // Sorted by revenue, highest first.
  for (let i = 1; i < rows.length; i++) expect(rows[i - 1].revenue).toBeGreaterThanOrEqual(rows[i].revenue);
  return rows
    .map((r) => normalise({ ...r, key: `${r.affiliate_id} ${r.currency}` }))
    .sort((a, b) => (a.key < b.key ? -1 : 1));
}

export async function reportSeries(w: World, from: Date, to: Date, interval: string) {
  const res = await w.m.api.get(
    `/api/reports/timeseries?from=${from.toISOString()}&to=${to.toISOString()}&interval=${interval}`,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const points = res.body.data.points as (ReportFigures & { period: string; currency: string })[];
  return points
    .map((p) => normalise({ ...p, key: `${p.period.slice(0, 10)} ${p.currency}` }))
    .filter((p) => p.figures.some((f) => f !== 0))
    .sort((a, b) => (a.key < b.key ? -1 : 1));
}

export function windows(): [Date, Date][] {
  const now = Date.now();
  const d = new Date(now);
  const monthAligned: [Date, Date] = [
    new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 4, 1)),
    new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)),
  ];
  const ragged: [Date, Date] = [new Date(now - 47.3 * DAY), new Date(now + 3_600_000)];
  const inside: [Date, Date] = [new Date(now - 20.5 * DAY), new Date(now - 3.25 * DAY)];
  return [monthAligned, ragged, inside];
}

export async function expectSame(w: World): Promise<void> {
  // The report and the straight aggregation are two statements: no entry may approve itself between them.
  const wait = w.soonUntil + 100 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  for (const [from, to] of windows()) {
    expect(await reportAffiliates(w, from, to), `affiliates ${from.toISOString()} ${to.toISOString()}`).toEqual(
      await naiveAffiliates(w, from, to),
    );
  }
  const [from, to] = windows()[1];
  // Narrowed to some affiliates (the dashboard's affiliates list): their rows of the whole report.
  const some = w.affiliates.slice(0, 2).map((a) => a.id);
  const naiveSome = (await naiveAffiliates(w, from, to)).filter((r) => some.some((id) => r.key.startsWith(id)));
  expect(await reportAffiliates(w, from, to, some), 'affiliates narrowed').toEqual(naiveSome);
  for (const interval of ['day', 'week', 'month']) {
    expect(await reportSeries(w, from, to, interval), `timeseries ${interval}`).toEqual(
      await naiveSeries(w, from, to, interval),
    );
  }
}
