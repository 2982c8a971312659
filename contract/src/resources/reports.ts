import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { CurrencyCode, Money, TimestampInput, Uuid } from '../common/primitives.js';

const c = initContract();

export const CommissionTotals = z
  .object({
    pending: Money,
    approved: Money,
    paid: Money,
    reversed: Money,
    rejected: Money,
    on_hold: Money,
  })
  .describe("Sum of the period's commission entries by status, exact, in the row's currency (clawbacks count negative).");

const figures = {
  clicks: z.number().int().describe('Clicks recorded.'),
  customers: z.number().int().describe('Customers (signups) attributed.'),
  conversions: z.number().int().describe('Conversions (paid charges) recorded.'),
  currency: z.string().describe('ISO 4217 code of every amount in the row; figures are never converted between currencies.'),
  revenue: Money.describe('Sum of conversion amounts, gross of refunds.'),
  refunded: Money.describe('Sum refunded of those conversions.'),
  commissions: CommissionTotals,
};

export const AffiliateReportRow = z.object({ affiliate_id: Uuid, ...figures }).describe('One affiliate in one currency over the period.');
export const TimeseriesPoint = z.object({ period: z.string().describe('Start of the period, ISO-8601 UTC (a day, a Monday, or the 1st of a month).'), ...figures });

export const ReportInterval = z.enum(['day', 'week', 'month']).describe('Periods in UTC; weeks start on Monday.');

const periodQuery = {
  program_id: Uuid.optional().describe('Only this program; default every program.'),
  from: TimestampInput.describe('Start of the period, inclusive.'),
  to: TimestampInput.describe('End of the period, exclusive; at most 3 years after `from`.'),
  currency: CurrencyCode.optional().describe('Only figures in this currency.'),
};

export const reportsContract = c.router({
  affiliates: {
    method: 'GET',
    path: '/api/reports/affiliates',
    summary: 'Report per affiliate',
    description: 'Clicks, customers, conversions, revenue, refunds and commissions by status per affiliate over a period, by revenue (highest first), one row per affiliate and currency; cursor pagination.',
    query: PageQuery.extend(periodQuery),
    responses: {
      200: z.object({ success: z.literal(true), data: z.object({ affiliates: z.array(AffiliateReportRow), next_cursor: NextCursor }) }),
      400: errorResponses[400],
    },
  },
  timeseries: {
    method: 'GET',
    path: '/api/reports/timeseries',
    summary: 'Time series',
    description: 'The same figures per day, week or month over a period, for charts: one point per period and currency (periods without activity included, with zeros, for the program currency).',
    query: z.object({ ...periodQuery, interval: ReportInterval.optional().describe('Default `day`.') }),
    responses: {
      200: z.object({ success: z.literal(true), data: z.object({ points: z.array(TimeseriesPoint) }) }),
      400: errorResponses[400],
    },
  },
});

export type AffiliateReportRow = z.infer<typeof AffiliateReportRow>;
export type TimeseriesPoint = z.infer<typeof TimeseriesPoint>;
