import type { MikroORM } from '@mikro-orm/postgresql';
import type { Job, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { CacheChange } from '../../db/change-notifications.js';
import { startQueue } from '../../jobs/queue.js';
import type { SecretBox } from '../../security/secret-box.js';
import {
  ImportCancelled,
  ImportSourceError,
  ImportSourceUnavailable,
  PHASES,
  emptyCounts,
  type Counts,
  type Phase,
  type Skip,
  type SourceBatch,
  type SourceReader,
} from './import-model.js';
import { settleTerms } from './import-terms.js';
import { ImportWriter } from './import-writer.js';
import type { ImportRow, ImportsRepository } from './imports.repository.js';
import { redact, secretsOf } from './redact.js';
import { readerFor, type SourceBaseUrls } from './sources/readers.js';
import { printable } from './storable-text.js';

export const IMPORT_QUEUE = 'imports';
export const CREDENTIALS_PURPOSE = 'import-credentials';
/** pg-boss's own retries: a job whose worker died (a crash, a restart) or that met an unexpected error. */
const RETRY_LIMIT = 5;
const IDLE_POLL_SECONDS = 5;
/** Imports run at once on one instance (each of a different organization: see start()). */
const DEFAULT_CONCURRENCY = 4;
/** Tries of an import against a source that cannot be read for now, before it fails. */
const DEFAULT_MAX_ATTEMPTS = 6;
/** How often a running job looks whether its import was cancelled (from any instance). */
const CANCEL_POLL_MS = 2_000;

/** The wait before try `attempt` (2, 3, ...): 30 s, doubling, at most 15 minutes. */
export const defaultRetryDelayMs = (attempt: number): number => Math.min(15 * 60_000, 30_000 * 2 ** (attempt - 2));

interface JobData {
  import_id: string;
  organization_id: string;
  /** Which try of the import this job is (1 unless the source made it wait). */
  attempt?: number;
}

/** Thrown inside a dry run's transaction so that it rolls back once everything is counted. */
class DryRunDone extends Error {}

export interface ImportRunnerOptions {
  /** Where each source is reached, read when an import starts (config.ts). */
  baseUrls: () => SourceBaseUrls;
  /** Waits between a request's quick retries (tests shorten them). */
  sleep?: (ms: number) => Promise<void>;
  /** Imports run at once by this instance (default 4). */
  concurrency?: number;
  /** Tries of an import whose source cannot be read for now (default 6). */
  maxAttempts?: number;
  /** The wait before try `attempt` (default defaultRetryDelayMs); a longer Retry-After wins. */
  retryDelayMs?: (attempt: number) => number;
  /** This instance's caches: told of a program whose terms an import changed, once that commits. */
  onChange?: (change: CacheChange) => void;
}

/**
 * Runs imports as jobs of the service's pg-boss queue (jobs/queue.ts). A job reads the source one
 * page at a time and writes each page in one transaction together with the import's progress, so
 * a job that stops (a restart, a crash: pg-boss hands it out again when its heartbeat stops) goes
 * on from the first page not yet committed; a page written twice changes nothing anyway
 * (import-writer.ts). A dry run reads everything, then writes it all in one transaction that is
 * rolled back: its counts are exactly what a real run would do, and nothing stays.
 *
 * Organizations do not wait on one another: each instance runs several jobs at once, and jobs are
 * grouped by organization with a group concurrency of 1 (pg-boss counts the active jobs of a group
 * in the database, across instances), so an organization's imports run one at a time, never
 * holding back another's. A source that cannot be read for now is not waited for inside the job:
 * the job ends and a new one is queued for later (`startAfter`), up to `maxAttempts` tries, so a
 * worker is only ever busy reading or writing. A failure that waiting cannot heal (a refused or
 * unsendable credential, a 4xx, a malformed answer) fails the import at once.
 */
export class ImportRunner {
  private boss: Promise<PgBoss> | undefined;
  private workerIds: string[] = [];
  /** The jobs running here, by import id: a cancel on this instance aborts them at once. */
  private readonly running = new Map<string, AbortController>();
  private readonly wakeups = new Set<ReturnType<typeof setTimeout>>();

  constructor(
    private readonly orm: MikroORM,
    private readonly imports: ImportsRepository,
    private readonly secrets: SecretBox,
    private readonly logger: Logger,
    private readonly options: ImportRunnerOptions,
  ) {}

  private get maxAttempts(): number {
    return this.options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  }

  /** Starts the queue's workers once (at boot in main.ts, so unfinished imports resume; else on the first import). */
  start(): Promise<PgBoss> {
    this.boss ??= (async () => {
      const boss = await startQueue(this.orm, this.logger);
      const queue = {
        retryLimit: RETRY_LIMIT,
        retryDelay: 5,
        retryBackoff: true,
        retryDelayMax: 300,
        heartbeatSeconds: 30,
        expireInSeconds: 24 * 3600,
      };
      await boss.createQueue(IMPORT_QUEUE, queue);
      // Separate workers rather than one with localConcurrency: pg-boss wakes a worker by its id,
      // and a busy one cannot take the job another organization just queued.
      const ids: string[] = [];
      for (let i = 0; i < (this.options.concurrency ?? DEFAULT_CONCURRENCY); i++) {
        ids.push(
          await boss.work<JobData>(
            IMPORT_QUEUE,
            { batchSize: 1, pollingIntervalSeconds: IDLE_POLL_SECONDS, groupConcurrency: 1 },
            async ([job]) => {
              if (job) await this.runJob(job);
            },
          ),
        );
      }
      this.workerIds = ids;
      return boss;
    })();
    this.boss.catch(() => (this.boss = undefined));
    return this.boss;
  }

  async stop(): Promise<void> {
    for (const timer of this.wakeups) clearTimeout(timer);
    this.wakeups.clear();
    const boss = await this.boss?.catch(() => undefined);
    await boss?.stop({ graceful: true, timeout: 5_000, close: false });
  }

  async enqueue(row: Pick<ImportRow, 'id' | 'organization_id'>, attempt = 1, startAfter?: Date): Promise<void> {
    const boss = await this.start();
    const data: JobData = { import_id: row.id, organization_id: row.organization_id, attempt };
    await boss.send(IMPORT_QUEUE, data, { group: { id: row.organization_id }, ...(startAfter ? { startAfter } : {}) });
    // Imports are rare: the workers poll at a relaxed pace, so the instance that queues one wakes
    // its own workers (now, or when a delayed try is due); another instance's poll finds it too.
    const wake = () => {
      for (const id of this.workerIds) boss.notifyWorker(id);
    };
    if (!startAfter) return wake();
    const timer = setTimeout(
      () => {
        this.wakeups.delete(timer);
        wake();
      },
      Math.max(0, startAfter.getTime() - Date.now()) + 50,
    );
    timer.unref();
    this.wakeups.add(timer);
  }

  /** Stops this instance's job of a cancelled import now (a job elsewhere sees it within CANCEL_POLL_MS). */
  cancelled(importId: string): void {
    this.running.get(importId)?.abort(new ImportCancelled());
  }

  private async runJob(job: Job<JobData>): Promise<void> {
    const data = job.data;
    const attempt = data.attempt ?? 1;
    const row = await this.imports.find(data.organization_id, data.import_id);
    if (!row || row.status !== 'running') return;
    const abort = new AbortController();
    job.signal.addEventListener('abort', () => abort.abort(job.signal.reason), { once: true });
    this.running.set(row.id, abort);
    const watch = setInterval(() => {
      void this.imports.statusOf(row.organization_id, row.id).then(
        (status) => status !== 'running' && abort.abort(new ImportCancelled()),
        () => undefined,
      );
    }, CANCEL_POLL_MS);
    watch.unref();
    let secrets: string[] = [];
    let pagesRead = 0;
    try {
      if (!row.sealed_credentials) throw new ImportSourceError('the credentials are gone');
      const credentials = JSON.parse(this.secrets.open(row.sealed_credentials, CREDENTIALS_PURPOSE)) as Record<
        string,
        string
      >;
      secrets = secretsOf(credentials);
      const source = readerFor(row.source, credentials, this.options.baseUrls(), {
        sleep: this.options.sleep,
        signal: abort.signal,
      });
      const reader: SourceReader = {
        readPage: async (phase, page) => {
          const read = await source.readPage(phase, page);
          pagesRead++;
          return read;
        },
      };
      if (!row.terms) {
        const campaigns = source.readTerms ? await source.readTerms() : null;
        const terms = await this.imports.db.transaction(async (db) => {
          const terms = await settleTerms(
            db,
            { ...this.target(row), dryRun: row.dry_run, choice: row.terms_choice },
            campaigns,
          );
          await this.imports.settled(db, row.id, row.organization_id, terms);
          return terms;
        });
        if (terms.applied === 'source') this.options.onChange?.({ kind: 'program', id: row.program_id });
      }
      if (row.dry_run) await this.dryRun(row, reader, abort.signal);
      else await this.realRun(row, reader, abort.signal);
    } catch (err) {
      await this.failed(row, job, attempt, err, (text) => printable(redact(text, secrets)), pagesRead);
    } finally {
      clearInterval(watch);
      this.running.delete(row.id);
    }
  }

  /** What a stopped job leaves: nothing (cancelled), the import failed for good, a later try queued, or pg-boss's own retry. */
  private async failed(
    row: ImportRow,
    job: Job<JobData>,
    attempt: number,
    err: unknown,
    shown: (text: string) => string,
    pagesRead: number,
  ): Promise<void> {
    if (err instanceof ImportCancelled || (await this.imports.statusOf(row.organization_id, row.id)) !== 'running') {
      this.logger.info({ importId: row.id }, 'import cancelled; its job stopped');
      return;
    }
    if (err instanceof ImportSourceError) {
      this.logger.warn({ importId: row.id, reason: shown(err.message) }, 'import failed');
      return this.imports.finish(row.id, row.organization_id, 'failed', shown(err.message));
    }
    if (err instanceof ImportSourceUnavailable) {
      const reason = shown(err.message);
      // Never reached at all, on the import's first try: an address or network to fix, not a
      // source having a bad moment. Said now rather than after tries spread over a quarter of an hour.
      if (err.unreachable && attempt === 1 && pagesRead === 0 && row.progress.pages === 0) {
        const where = row.source === 'csv' ? '' : ` at ${this.options.baseUrls()[row.source]}`;
        const message = `${reason}${where}. Nothing was imported: check that this server can reach it (IMPORT_${row.source.toUpperCase()}_API_BASE_URL), then start the import again.`;
        this.logger.warn({ importId: row.id, reason }, 'import failed: its source could not be reached');
        return this.imports.finish(row.id, row.organization_id, 'failed', message);
      }
      if (attempt >= this.maxAttempts) {
        this.logger.warn(
          { importId: row.id, attempt, reason },
          'import failed: its source could not be read on its last try',
        );
        const message = `${reason}, on each of ${attempt} tries; the import stopped. What it imported so far is kept: start it again to go on (nothing is imported twice).`;
        return this.imports.finish(row.id, row.organization_id, 'failed', message);
      }
      const wait = Math.max(err.retryAfterMs ?? 0, (this.options.retryDelayMs ?? defaultRetryDelayMs)(attempt + 1));
      const at = new Date(Date.now() + wait);
      this.logger.warn({ importId: row.id, attempt, reason, retryAt: at }, 'import waiting for its source');
      await this.enqueue(row, attempt + 1, at);
      return this.imports.waiting(
        row.id,
        row.organization_id,
        { attempt: attempt + 1, max_attempts: this.maxAttempts, at: at.toISOString(), reason },
        `${reason}: trying again at ${at.toISOString()} (try ${attempt + 1} of ${this.maxAttempts}).`,
      );
    }
    // Anything else (the database, a bug): pg-boss tries the job again; its last try fails the
    // import with words of our own, the detail kept in the log.
    if (job.retryCount >= RETRY_LIMIT) {
      this.logger.error({ err, importId: row.id }, 'import failed on an unexpected error');
      return this.imports.finish(
        row.id,
        row.organization_id,
        'failed',
        `The import stopped on an unexpected error (tried ${job.retryCount + 1} times). What it imported so far is kept: start it again to go on (nothing is imported twice).`,
      );
    }
    this.logger.warn(
      { err, importId: row.id, retryCount: job.retryCount },
      'import stopped; the job will be tried again, from its last committed page',
    );
    await this.imports
      .note(
        row.id,
        row.organization_id,
        `The import stopped on an unexpected error; it goes on from its last page shortly (try ${job.retryCount + 2} of ${RETRY_LIMIT + 1}).`,
      )
      .catch(() => undefined);
    throw err;
  }

  private async realRun(row: ImportRow, reader: SourceReader, signal: AbortSignal): Promise<void> {
    const counts: Counts = { ...emptyCounts(), ...row.counts };
    const skipped: Skip[] = [...row.skipped];
    let pages = row.progress.pages;
    const startPhase = PHASES.indexOf(row.progress.phase as Phase);
    for (let p = Math.max(0, startPhase); p < PHASES.length; p++) {
      const phase = PHASES[p];
      let page: number | null = p === startPhase ? (row.progress.page ?? 1) : 1;
      while (page !== null) {
        signal.throwIfAborted();
        const read = await reader.readPage(phase, page);
        pages++;
        const next = read.next;
        await this.imports.db.transaction(async (db) => {
          if (!(await this.imports.lockRunning(db, row.id, row.organization_id))) throw new ImportCancelled();
          await new ImportWriter(db, this.target(row), counts, skipped).write(read.batch);
          const progress =
            next === null ? { phase: PHASES[p + 1] ?? 'done', pages, page: 1 } : { phase, pages, page: next };
          await this.imports.progress(db, row.id, row.organization_id, progress, counts, skipped);
        });
        page = next;
      }
    }
    await this.imports.finish(row.id, row.organization_id, 'succeeded', null, { phase: 'done', pages });
  }

  private async dryRun(row: ImportRow, reader: SourceReader, signal: AbortSignal): Promise<void> {
    const batches: SourceBatch[] = [];
    let pages = 0;
    for (const phase of PHASES) {
      let page: number | null = 1;
      while (page !== null) {
        signal.throwIfAborted();
        const read = await reader.readPage(phase, page);
        batches.push(read.batch);
        pages++;
        if (
          !(await this.imports.progress(
            this.imports.db,
            row.id,
            row.organization_id,
            { phase, pages },
            emptyCounts(),
            [],
          ))
        )
          throw new ImportCancelled();
        page = read.next;
      }
    }
    const counts = emptyCounts();
    const skipped: Skip[] = [];
    if (
      !(await this.imports.progress(
        this.imports.db,
        row.id,
        row.organization_id,
        { phase: 'writing', pages },
        counts,
        skipped,
      ))
    )
      throw new ImportCancelled();
    try {
      await this.imports.db.transaction(async (db) => {
        const writer = new ImportWriter(db, this.target(row), counts, skipped);
        for (const batch of batches) await writer.write(batch);
        throw new DryRunDone();
      });
    } catch (err) {
      if (!(err instanceof DryRunDone)) throw err;
    }
    await this.imports.progress(
      this.imports.db,
      row.id,
      row.organization_id,
      { phase: 'done', pages },
      counts,
      skipped,
    );
    await this.imports.finish(row.id, row.organization_id, 'succeeded', null);
  }

  private target(row: ImportRow) {
    return { organizationId: row.organization_id, programId: row.program_id, source: row.source, importId: row.id };
  }
}
