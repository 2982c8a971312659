import type { MikroORM } from '@mikro-orm/postgresql';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { CacheChange } from '../../db/change-notifications.js';
import { Db } from '../../db/sql.js';
import { startQueue } from '../../jobs/queue.js';
import {
  DeletionNotRunning,
  deleteBatch,
  markFinished,
  markRunning,
  tablesOf,
  targetsOf,
  unfinishedDeletions,
  type DeletionRecord,
} from './data-deletion.js';

export const DATA_DELETION_QUEUE = 'data-deletions';
/** pg-boss retries of a job that failed (the database away, a crash); past them the deletion is marked failed and may be asked for again. */
const RETRY_LIMIT = 10;
/** Whole passes over the tables in one run: a pass starts again when a row written meanwhile (a fold's summary, a late click) holds a key. */
const MAX_PASSES = 5;
/** Bounds of a batch, in rows, and the time a batch aims at: far below any statement timeout. */
const MIN_BATCH_ROWS = 10;
const TARGET_BATCH_MS = 500;

interface JobData {
  organization_id: string;
  deletion_id: string;
}

export interface DeletionRunnerOptions {
  /** The most rows one batch deletes (and its first size; it adapts to TARGET_BATCH_MS). */
  maxBatchRows?: number;
  /** pg-boss heartbeat of a running deletion: a job whose worker stopped is handed out again after it (seconds, at least 10). */
  heartbeatSeconds?: number;
  /** How often pg-boss looks for such jobs (jobs/queue.ts). */
  superviseIntervalSeconds?: number;
  /** This instance's caches (services.ts caches.changed): every other instance hears of the change by NOTIFY. */
  onChange?: (change: CacheChange) => void;
}

const isForeignKeyViolation = (err: unknown) => (err as { code?: string } | null)?.code === '23503';
const isStatementTimeout = (err: unknown) => (err as { code?: string } | null)?.code === '57014';

/**
 * Runs deletions (data-deletion.ts) as jobs of the service's pg-boss queue: every table of the
 * organization, in ORGANIZATION_TABLES' order, in batches of at most maxBatchRows rows, each its
 * own short transaction that commits the batch together with the deletion's progress. A batch's
 * size adapts so that it takes about TARGET_BATCH_MS (a statement timeout shrinks it and the
 * batch is tried again). Nothing is locked beyond the organization's own rows and its deletion's
 * row, so every other organization's writes go on meanwhile. A job that stops (a restart, a kill:
 * pg-boss hands it out again when its heartbeat stops; a starting runner queues every unfinished
 * deletion at once) starts its pass again: the tables already emptied cost one empty batch each,
 * and the counts already committed stay. Two runners of one deletion take turns batch by batch
 * (each batch locks the deletion's row), and never count a row twice.
 */
export class DeletionRunner {
  private boss: Promise<PgBoss> | undefined;
  private workerId: string | undefined;
  private readonly db: Db;
  private readonly maxBatchRows: number;

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
    private readonly options: DeletionRunnerOptions = {},
  ) {
    this.db = Db.of(orm);
    this.maxBatchRows = options.maxBatchRows ?? 5_000;
  }

  /** Starts the worker once (at boot in main.ts, so that unfinished deletions go on; else on the first deletion). */
  start(): Promise<PgBoss> {
    this.boss ??= (async () => {
      const boss = await startQueue(this.orm, this.logger, {
        superviseIntervalSeconds: this.options.superviseIntervalSeconds,
      });
      await boss.createQueue(DATA_DELETION_QUEUE, {
        retryLimit: RETRY_LIMIT,
        retryDelay: 2,
        retryBackoff: true,
        retryDelayMax: 120,
        heartbeatSeconds: this.options.heartbeatSeconds ?? 30,
        expireInSeconds: 24 * 3600,
      });
      this.workerId = await boss.work<JobData>(
        DATA_DELETION_QUEUE,
        { batchSize: 1, pollingIntervalSeconds: 5 },
        async ([job]) => {
          if (job) await this.runJob(job.data, job.retryCount);
        },
      );
      // A deletion whose worker died is handed out again once its heartbeat is late; queued
      // again here too, so that a restarted instance goes on at once.
      for (const d of await unfinishedDeletions(this.db))
        await boss.send(DATA_DELETION_QUEUE, {
          organization_id: d.organization_id,
          deletion_id: d.id,
        } satisfies JobData);
      return boss;
    })();
    this.boss.catch(() => (this.boss = undefined));
    return this.boss;
  }

  async stop(): Promise<void> {
    const boss = await this.boss?.catch(() => undefined);
    await boss?.stop({ graceful: true, timeout: 5_000, close: false });
  }

  async enqueue(d: { organization_id: string; id: string }): Promise<void> {
    const boss = await this.start();
    await boss.send(DATA_DELETION_QUEUE, { organization_id: d.organization_id, deletion_id: d.id } satisfies JobData);
    if (this.workerId) boss.notifyWorker(this.workerId);
  }

  private async runJob(data: JobData, retryCount: number): Promise<void> {
    const ref = { organization_id: data.organization_id, id: data.deletion_id };
    const d = await markRunning(this.db, ref);
    if (!d) return; // finished already (by another job of the same deletion)
    const startedAt = Date.now();
    const log = this.logger.child({ deletionId: d.id, organizationId: d.organization_id, kind: d.kind });
    log.info({ retryCount }, 'data deletion: running');
    try {
      for (let pass = 1; ; pass++) {
        try {
          await this.pass(d, log);
          break;
        } catch (err) {
          if (!isForeignKeyViolation(err) || pass >= MAX_PASSES) throw err;
          log.info({ err, pass }, 'data deletion: a row written meanwhile holds a key; starting the pass again');
        }
      }
      await markFinished(this.db, ref, 'completed', null);
      log.info({ ms: Date.now() - startedAt }, 'data deletion: completed');
    } catch (err) {
      if (err instanceof DeletionNotRunning) return;
      if (retryCount >= RETRY_LIMIT) {
        log.error({ err }, 'data deletion failed; it may be asked for again');
        await markFinished(this.db, ref, 'failed', (err as Error).message);
        return;
      }
      log.warn({ err, retryCount }, 'data deletion stopped; the job will be tried again and go on where it stopped');
      throw err;
    }
  }

  /** One pass over every table of every organization the deletion deletes from, each table until none of its rows is left. */
  private async pass(d: DeletionRecord, log: Logger): Promise<void> {
    for (const organizationId of await targetsOf(this.db, d)) {
      for (const table of tablesOf(d.kind)) {
        let limit = this.maxBatchRows;
        let rows = 0;
        for (;;) {
          const started = Date.now();
          let n: number;
          try {
            const batch = await deleteBatch(this.db, d, organizationId, table, limit);
            for (const change of batch.changes) this.options.onChange?.(change);
            n = batch.n;
          } catch (err) {
            if (!isStatementTimeout(err) || limit <= MIN_BATCH_ROWS) throw err;
            limit = Math.max(MIN_BATCH_ROWS, Math.floor(limit / 4));
            continue;
          }
          rows += n;
          if (n === 0) break;
          const ms = Date.now() - started;
          if (ms > TARGET_BATCH_MS) limit = Math.max(MIN_BATCH_ROWS, Math.floor(limit / 2));
          else if (ms < TARGET_BATCH_MS / 4) limit = Math.min(this.maxBatchRows, limit * 2);
        }
        if (rows > 0) log.info({ table, organization: organizationId, rows }, 'data deletion: table done');
      }
    }
  }
}
