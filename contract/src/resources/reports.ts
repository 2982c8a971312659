import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { CurrencyCode, Livemode, Money, TimestampInput, Uuid } from '../common/primitives.js';

const c = initContract();

export const CommissionTotals = z
  .object({
    pending: Money,
    approved: Money,
    paid: Money,
    reversed: Money,
    rejected: Money,
    on_hold: Money,
    earned: Money.describe(
      'What the affiliate earned: `pending` + `approved` + `paid`, net of clawbacks and negative adjustments; `reversed`, `rejected` and `on_hold` left out. The figure the partner portal shows the affiliate as earned for the same period.',
    ),
  })
  .describe(
    "Sum of the amounts of the period's commission entries by status (as `GET /api/commissions` shows it now: a `pending` entry whose `approves_at` has passed is `approved`), exact, in the row's currency; clawbacks and negative adjustments count negative. A sale's entries (and its clawbacks) fall in the period of the conversion's `occurred_at`, an adjustment in the period of its `created_at`.",
  );

const figures = {
  clicks: z
    .number()
    .int()
    .describe("Clicks whose `occurred_at` is in the period; counted in the row of the program's currency."),
  customers: z
    .number()
    .int()
    .describe("Customers (signups) attributed, by their creation time; counted in the row of the program's currency."),
  conversions: z
    .number()
    .int()
    .describe('Conversions (charges) whose `occurred_at` is in the period, refunded ones included.'),
  currency: z
    .string()
    .describe('ISO 4217 code of every amount in the row; figures are never converted between currencies.'),
  revenue: Money.describe("Sum of those conversions' amounts, gross of refunds."),
  refunded: Money.describe('Sum refunded of those conversions (whenever the refund came).'),
  net_revenue: Money.describe('`revenue` less `refunded`: what those conversions brought in after refunds, exact.'),
  commissions: CommissionTotals,
};

export const AffiliateReportRow = z
  .object({
    affiliate_id: Uuid.describe('The affiliate.'),
    program_id: Uuid.describe("The affiliate's program."),
    ...figures,
    livemode: Livemode,
  })
  .describe('One affiliate in one currency over the period.');
export const TimeseriesPoint = z
  .object({
    period: z
      .string()
      .describe(
        'Start of the period, ISO-8601 UTC (midnight of a day, of a Monday, or of the 1st of a month); the first period may start before `from`, and counts only what is at or after `from`.',
      ),
    ...figures,
  })
  .describe('One period in one currency.');

export const ReportTotals = z
  .object(figures)
  .describe(
    'The whole period in one currency: the sums of its points, computed exactly by the service (a page shows them as they are, without adding points up).',
  );

export const ReportInterval = z.enum(['day', 'week', 'month']).describe('Periods in UTC; weeks start on Monday.');

const periodQuery = {
  program_id: Uuid.optional().describe('Only this program (404 unless it is one of yours); default every program.'),
  from: TimestampInput.describe('Start of the period, inclusive, ISO-8601 (e.g. `2026-10-01T00:00:00Z`).'),
  to: TimestampInput.describe('End of the period, exclusive; after `from`, at most 3 years (1096 days) later.'),
  currency: CurrencyCode.optional().describe('Only figures in this currency.'),
};

/** The most affiliates one report may be narrowed to (`affiliate_id`): a page of the affiliates list. */
export const MAX_REPORT_AFFILIATES = 100;
const UUID_TEXT = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const AFFILIATE_ID_LIST = new RegExp(`^${UUID_TEXT}(,${UUID_TEXT}){0,${MAX_REPORT_AFFILIATES - 1}}$`);

export const reportsContract = c.router({
  affiliates: {
    method: 'GET',
    path: '/api/reports/affiliates',
    summary: 'Report per affiliate',
    description:
      'Clicks, customers, conversions, revenue, refunds and commissions by status per affiliate over a period: one row per affiliate and currency with any activity in the period, by revenue (highest first, then affiliate id and currency); cursor pagination. Exact and current: it sums the summaries folded in the background and, live, whatever was recorded or changed since.',
    query: PageQuery.extend({
      ...periodQuery,
      affiliate_id: z
        .string()
        .regex(AFFILIATE_ID_LIST, `Expected 1 to ${MAX_REPORT_AFFILIATES} affiliate ids (UUIDs), comma-separated`)
        .optional()
        .describe(
          `Only these affiliates: up to ${MAX_REPORT_AFFILIATES} ids, comma-separated (e.g. a page of \`GET /api/affiliates\`, to show each one's figures). Ids that are not your affiliates, or had no activity in the period, simply have no row.`,
        ),
    }),
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({ affiliates: z.array(AffiliateReportRow), next_cursor: NextCursor }),
      }),
      400: errorResponses[400],
      404: errorResponses[404],
    },
  },
  timeseries: {
    method: 'GET',
    path: '/api/reports/timeseries',
    summary: 'Time series',
    description:
      "The same figures per day, week (starting Monday) or month, UTC, over a period, for charts: one point per period and currency, oldest first. Periods without activity are included with zeros, in the program's currency (every program's currency without `program_id`, or the `currency` asked for).",
    query: z.object({ ...periodQuery, interval: ReportInterval.optional().describe('Default `day`.') }),
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({
          interval: ReportInterval,
          livemode: Livemode.describe(
            'Whose figures these are: false for test data (a test key or a test-mode session).',
          ),
          points: z.array(TimeseriesPoint),
          totals: z
            .array(ReportTotals)
            .describe('One row per currency of `points`: the figures of the whole period, exact.'),
        }),
      }),
      400: errorResponses[400],
      404: errorResponses[404],
    },
  },
});

export type AffiliateReportRow = z.infer<typeof AffiliateReportRow>;
export type TimeseriesPoint = z.infer<typeof TimeseriesPoint>;
export type ReportInterval = z.infer<typeof ReportInterval>;
export type ReportTotals = z.infer<typeof ReportTotals>;
