import type { MikroORM } from '@mikro-orm/postgresql';
import { readFromReplica } from '../../db/database.js';
import type { ReplicaRead } from '../../db/replica-reads.js';
import { Db } from '../../db/sql.js';
import { affiliatesStatement, READING_SETTINGS, timeseriesStatement } from './reports.statements.js';
import { CompiledQuery, sql } from 'kysely';

/**
 * The reports' read model (its tables and functions: the baseline
 * migration's baseline/report-tables.ts and baseline/report-functions.ts): summaries folded in the background plus a live
 * aggregation of what is not folded yet, in one statement, so one snapshot: exact, and as fresh as
 * the raw tables.
 *
 * A report over [from, to) splits the period at UTC day boundaries: [r1, r2) from the summaries
 * plus the rows the fold has not reached, each end of it the midnight nearer (in rows) to from and
 * to; the parts of a day between an end and its midnight are aggregated from the raw rows, added
 * when inside the period, subtracted when outside (reports.service.ts summarySpan):
 * - the affiliates report: the running totals per affiliate at the month boundary nearest to r1
 *   and to r2 (report_affiliate_totals), plus or minus the days between each boundary and its month
 *   (report_affiliate_days): at most half a month of day rows at each end, however long the period;
 * - the time series: the days (report_program_days);
 * - entries still in their hold are folded as pending (listed in report_deferred_commissions until
 *   a fold finds them due); those whose approves_at has passed since the last fold are moved from
 *   pending to approved live (a handful, by the list's index on approves_at);
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

  /**
   * One fold step (report_fold in the migration), if no other instance is folding: answers the new
   * watermark, or undefined when another instance holds the fold. Its own transaction, with a
   * statement timeout of its own (a catch-up step may take longer than a request's statement).
   */
  fold(lagSeconds: number, spanSeconds: number): Promise<Date | undefined> {
    return Db.of(this.orm).transaction(async (db) => {
      const [lock] = await db.rows(
        sql<{
          locked: boolean;
        }>`select pg_try_advisory_xact_lock(7262010002) as locked, set_config('statement_timeout', '60s', true), set_config('jit', 'off', true)`,
      );
      if (!lock?.locked) return undefined;
      // New BRIN ranges summarized here, not by VACUUM (autovacuum may be off); needs the tables'
      // owner, as the migrations are. The plan of the fold's scans by created_at relies on it.
      await db
        .transaction((s) =>
          s.rows(sql`select brin_summarize_new_values(i::regclass) from unnest(${BRIN_INDEXES}::text[]) i`),
        )
        .catch(() => undefined);
      const [row] = await db.rows(
        sql<{
          w: Date;
        }>`select report_fold(make_interval(secs => ${lagSeconds}), make_interval(secs => ${spanSeconds})) as w`,
      );
      return row.w;
    });
  }

  /** The watermark and the time of the last fold. */
  async foldState(): Promise<{ folded_before: Date; folded_at: Date | null }> {
    return (await Db.of(this.orm).one(
      sql<{ folded_before: Date; folded_at: Date | null }>`select folded_before, folded_at from report_fold_state`,
    ))!;
  }
}

const BRIN_INDEXES = [
  'clicks_created_at_brin',
  'clicks_occurred_at_brin',
  'customers_created_at_brin',
  'conversions_created_at_brin',
  'commissions_created_at_brin',
];
