import type { MikroORM } from '@mikro-orm/postgresql';
import { readFromReplica } from '../../db/database.js';
import type { ReplicaRead } from '../../db/replica-reads.js';
import { Db } from '../../db/sql.js';
import { foldOrganization, organizationsToFold } from './report-fold.js';
import { affiliatesStatement, READING_SETTINGS, timeseriesStatement } from './reports.statements.js';
import { CompiledQuery, sql } from 'kysely';

/**
 * The reports' read model, per organization: day and month summaries folded in the background
 * (report-fold.ts) from an insert-only log of what rows contribute (report_deltas, written with the
 * rows: report-contributions.ts), plus the organization's deltas not folded yet, in one statement,
 * so one snapshot: exact, and as fresh as the raw tables.
 *
 * A report over [from, to) splits the period at UTC day boundaries: [r1, r2) from the summaries and
 * the organization's due deltas, each end of it the midnight nearer (in rows) to from and to; the
 * parts of a day between an end and its midnight are aggregated from the raw rows, added when
 * inside the period, subtracted when outside (reports.service.ts summarySpan):
 * - the affiliates report: the running totals per affiliate at the month boundary nearest to r1
 *   and to r2 (report_affiliate_totals), plus or minus the days between each boundary and its month
 *   (report_affiliate_days): at most half a month of day rows at each end, however long the period;
 * - the time series: the days (report_program_days);
 * - an entry in its hold counts as pending, and its scheduled approval (a delta due at its
 *   approves_at) moves it to approved once due, folded or not.
 * Every part is filtered by the organization: one shard on Citus.
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

/** The reports module's only way to the database. */
export class ReportsRepository {
  constructor(private readonly orm: MikroORM) {}

  /** Whether the program is this organization's. */
  async programExists(organizationId: string, programId: string): Promise<boolean> {
    const row = await Db.of(this.orm).one(
      sql`select 1 as found from programs where organization_id = ${organizationId} and id = ${programId}`,
    );
    return row !== undefined;
  }

  /**
   * Statement settings for the report's one statement, local to its transaction (nothing stays
   * on the connection): no sequential scan of a raw table, whatever the statistics say, room
   * for the aggregation in memory, and no parallel workers (their start cost more than the small
   * index scans they would share, 30 ms each on a busy machine). On a read replica when there is
   * one (db/replica-reads.ts): a report may be behind by its lag, never inconsistent (one statement,
   * one snapshot of the summaries and the raw rows alike).
   */
  private reading<T>(read: ReplicaRead, fn: (db: Db) => Promise<T>): Promise<T> {
    return readFromReplica(this.orm, read, (source) =>
      Db.of(source).transaction(async (db) => {
        await db.rows(CompiledQuery.raw(READING_SETTINGS));
        return fn(db);
      }),
    );
  }

  /**
   * One page of the affiliates report, ranked by revenue. Its whole months are the difference of
   * two boundaries of report_affiliate_totals (two rows per affiliate, however long the period);
   * every (affiliate, currency) of the period is ranked by revenue (first from the rows that carry
   * revenue alone, see affiliatesStatement), then the page's rows summed. `affiliateIds` narrows
   * every part to those affiliates (null: all).
   */
  affiliatesPage(
    window: ReportWindow,
    affiliateIds: readonly string[] | null,
    after: AffiliateCursor | undefined,
    limit: number,
  ): Promise<AffiliateFigureRow[]> {
    const { text, values } = affiliatesStatement(window, affiliateIds, after, limit);
    return this.reading('GET /api/reports/affiliates', (db) =>
      db.rows(CompiledQuery.raw(text, values) as CompiledQuery<AffiliateFigureRow>),
    );
  }

  /** The time series: one point per period and currency, periods without activity as zeros. */
  timeseries(window: ReportWindow, interval: 'day' | 'week' | 'month'): Promise<PointRow[]> {
    const { text, values } = timeseriesStatement(window, interval);
    return this.reading('GET /api/reports/timeseries', (db) =>
      db.rows(CompiledQuery.raw(text, values) as CompiledQuery<PointRow>),
    );
  }

  /** Folds the organization's due deltas into its summaries (report-fold.ts). */
  fold(organizationId: string): Promise<number> {
    return foldOrganization(this.orm, organizationId);
  }

  /** Organizations with deltas due (report-fold.ts organizationsToFold). */
  organizationsToFold(limit: number): Promise<string[]> {
    return organizationsToFold(this.orm, limit);
  }
}
