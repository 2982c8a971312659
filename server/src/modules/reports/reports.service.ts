import { Decimal } from 'decimal.js';
import type { ReportInterval, ReportTotals, TimeseriesPoint } from '@affiliate-attribution/contract';
import type { AffiliateReportRow } from '../../resources.js';
import { BadRequestError, NotFoundError } from '../../http/errors.js';
import { pageLimit } from '../../http/pagination.js';
import { decimalToNumber, isUuid } from '../../http/serialize.js';
import { earnedOf } from '../commissions/earned.js';
import type { AffiliateCursor, FigureRow, ReportWindow, ReportsRepository } from './reports.repository.js';

/** The longest period a report covers: three years (of 366 days). */
export const MAX_REPORT_DAYS = 1096;
const DAY_MS = 86_400_000;

export interface ReportQuery {
  program_id?: string;
  from: string;
  to: string;
  currency?: string;
}

/** The first instant of the UTC day of `d`. */
const dayStart = (d: Date): Date => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));

/**
 * [r1, r2): the whole UTC days read from the summaries; the rest is aggregated from the raw rows.
 * Each end rounds to the UTC midnight on its side with fewer raw rows between the two (rows are
 * stamped at most minutes ahead of now, so a "to" of now rounds up: nothing happened since): the
 * part inside the period is added ([from, r1), [r2, to)), a part outside it subtracted ([r1, from),
 * [to, r2): reports.statements.ts). None inside: r1 = r2 = to, the whole period raw.
 */
export function summarySpan(from: Date, to: Date, now: number = Date.now()): { r1: Date; r2: Date } {
  const r1 = cheaperMidnight(from, now);
  const r2 = cheaperMidnight(to, now);
  return r1.getTime() < r2.getTime() ? { r1, r2 } : { r1: to, r2: to };
}

/** How far ahead of now a row may be stamped (a conversion's occurred_at: now + 5 minutes). */
const AHEAD_MS = 5 * 60_000;

/** The UTC midnight at or next to `d` whose gap to `d` holds less time in which rows can exist. */
function cheaperMidnight(d: Date, now: number): Date {
  const down = dayStart(d);
  if (down.getTime() === d.getTime()) return d;
  const up = new Date(down.getTime() + DAY_MS);
  const horizon = now + AHEAD_MS;
  const span = (a: number, b: number) => Math.max(0, Math.min(b, horizon) - a);
  return span(d.getTime(), up.getTime()) < span(down.getTime(), d.getTime()) ? up : down;
}

const AMOUNTS = ['revenue', 'refunded', 'pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'] as const;
const COUNTS = ['clicks', 'customers', 'conversions'] as const;

/** The figures of the whole period per currency: the points' sums, exact (decimal text, as PostgreSQL gives them). */
export function totalsByCurrency(rows: readonly FigureRow[]): FigureRow[] {
  const byCurrency = new Map<string, FigureRow>();
  for (const row of rows) {
    const total = byCurrency.get(row.currency);
    if (!total) {
      byCurrency.set(row.currency, { ...row });
      continue;
    }
    for (const k of COUNTS) total[k] = String(Number(total[k]) + Number(row[k]));
    for (const k of AMOUNTS) total[k] = new Decimal(total[k]).plus(row[k]).toString();
  }
  return [...byCurrency.values()];
}

function figures(row: FigureRow) {
  return {
    clicks: Number(row.clicks),
    customers: Number(row.customers),
    conversions: Number(row.conversions),
    currency: row.currency,
    revenue: decimalToNumber(row.revenue),
    refunded: decimalToNumber(row.refunded),
    net_revenue: new Decimal(row.revenue).minus(row.refunded).toNumber(),
    commissions: {
      pending: decimalToNumber(row.pending),
      approved: decimalToNumber(row.approved),
      paid: decimalToNumber(row.paid),
      reversed: decimalToNumber(row.reversed),
      rejected: decimalToNumber(row.rejected),
      on_hold: decimalToNumber(row.on_hold),
      earned: earnedOf(row).toNumber(),
    },
  };
}

function encodeCursor(c: AffiliateCursor): string {
  return Buffer.from(JSON.stringify([c.revenue, c.affiliateId, c.currency])).toString('base64url');
}

function decodeCursor(cursor: string | undefined): AffiliateCursor | undefined {
  if (cursor === undefined) return undefined;
  try {
    const [revenue, affiliateId, currency] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (
      typeof revenue === 'string' &&
      /^-?\d{1,30}(\.\d{1,20})?$/.test(revenue) &&
      typeof affiliateId === 'string' &&
      isUuid(affiliateId) &&
      typeof currency === 'string' &&
      /^[A-Z]{3}$/.test(currency)
    ) {
      return { revenue, affiliateId, currency };
    }
  } catch {
    // fall through: a cursor we did not issue
  }
  throw new BadRequestError('cursor: Invalid cursor');
}

/** Reports: per affiliate and over time, for one program or all, over a period. */
export class ReportsService {
  constructor(private readonly reports: ReportsRepository) {}

  async affiliates(
    organizationId: string,
    query: ReportQuery & { limit?: number; cursor?: string; affiliate_id?: string },
  ): Promise<{ affiliates: AffiliateReportRow[]; next_cursor: string | null }> {
    const after = decodeCursor(query.cursor);
    const window = await this.window(organizationId, query);
    // The contract holds the list to 1..100 UUIDs; repeats are harmless, case is PostgreSQL's.
    const affiliateIds = query.affiliate_id ? [...new Set(query.affiliate_id.toLowerCase().split(','))] : null;
    const limit = pageLimit(query.limit);
    const rows = await this.reports.affiliatesPage(window, affiliateIds, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      affiliates: page.map((r) => ({ affiliate_id: r.affiliate_id, program_id: r.program_id, ...figures(r) })),
      next_cursor:
        rows.length > limit && last
          ? encodeCursor({ revenue: last.revenue, affiliateId: last.affiliate_id, currency: last.currency })
          : null,
    };
  }

  async timeseries(
    organizationId: string,
    query: ReportQuery & { interval?: ReportInterval },
  ): Promise<{ interval: ReportInterval; points: TimeseriesPoint[]; totals: ReportTotals[] }> {
    const interval = query.interval ?? 'day';
    const window = await this.window(organizationId, query);
    const rows = await this.reports.timeseries(window, interval);
    return {
      interval,
      points: rows.map((r) => ({ period: `${r.period}T00:00:00.000Z`, ...figures(r) })),
      totals: totalsByCurrency(rows).map(figures),
    };
  }

  private async window(organizationId: string, query: ReportQuery): Promise<ReportWindow> {
    const from = new Date(query.from);
    const to = new Date(query.to);
    if (!(from.getTime() < to.getTime())) throw new BadRequestError('to: must be after from');
    if (to.getTime() - from.getTime() > MAX_REPORT_DAYS * DAY_MS)
      throw new BadRequestError(`to: a report covers at most 3 years (${MAX_REPORT_DAYS} days) from from`);
    if (query.program_id && !(await this.reports.programExists(organizationId, query.program_id)))
      throw new NotFoundError('Program not found');
    return {
      organizationId,
      programId: query.program_id ?? null,
      currency: query.currency?.toUpperCase() ?? null,
      from,
      to,
      ...summarySpan(from, to),
    };
  }
}
