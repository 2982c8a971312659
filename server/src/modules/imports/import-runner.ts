import type { MikroORM } from '@mikro-orm/postgresql';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { startQueue } from '../../jobs/queue.js';
import type { SecretBox } from '../../security/secret-box.js';
import { ImportSourceError, PHASES, emptyCounts, type Counts, type Phase, type Skip, type SourceBatch, type SourceReader } from './import-model.js';
import { ImportWriter } from './import-writer.js';
import type { ImportRow, ImportsRepository } from './imports.repository.js';
import { readerFor, type SourceBaseUrls } from './sources/readers.js';

export const IMPORT_QUEUE = 'imports';
export const CREDENTIALS_PURPOSE = 'import-credentials';
const RETRY_LIMIT = 5;
const IDLE_POLL_SECONDS = 5;

interface JobData {
  import_id: string;
  organization_id: string;
}

/** Thrown inside a dry run's transaction so that it rolls back once everything is counted. */
class DryRunDone extends Error {}

export interface ImportRunnerOptions {
  /** Where each source is reached, read when an import starts (config.ts). */
  baseUrls: () => SourceBaseUrls;
  /** Waits between a source's retries (tests shorten them). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Runs imports as jobs of the service's pg-boss queue (jobs/queue.ts). A job reads the source one
 * page at a time and writes each page in one transaction together with the import's progress, so
 * a job that stops (a restart, a crash: pg-boss hands it out again when its heartbeat stops) goes
 * on from the first page not yet committed; a page written twice changes nothing anyway
 * (import-writer.ts). A dry run reads everything, then writes it all in one transaction that is
 * rolled back: its counts are exactly what a real run would do, and nothing stays.
 */
export class ImportRunner {
  private boss: Promise<PgBoss> | undefined;
  private workerId: string | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly imports: ImportsRepository,
    private readonly secrets: SecretBox,
    private readonly logger: Logger,
    private readonly options: ImportRunnerOptions,
  ) {}

  /** Starts the queue's worker once (at boot in main.ts, so unfinished imports resume; else on the first import). */
  start(): Promise<PgBoss> {
    this.boss ??= (async () => {
      const boss = await startQueue(this.orm, this.logger);
      await boss.createQueue(IMPORT_QUEUE, { retryLimit: RETRY_LIMIT, retryDelay: 5, retryBackoff: true, retryDelayMax: 300, heartbeatSeconds: 30, expireInSeconds: 24 * 3600 });
      // Imports are rare: a relaxed poll (a retry, or a job another instance queued, waits at most
      // that long), and the instance that queues one wakes its own worker at once (enqueue).
      this.workerId = await boss.work<JobData>(IMPORT_QUEUE, { batchSize: 1, pollingIntervalSeconds: IDLE_POLL_SECONDS }, async ([job]) => {
        if (job) await this.runJob(job.data, job.retryCount);
      });
      return boss;
    })();
    this.boss.catch(() => (this.boss = undefined));
    return this.boss;
  }

  async stop(): Promise<void> {
    const boss = await this.boss?.catch(() => undefined);
    await boss?.stop({ graceful: true, timeout: 5_000, close: false });
  }

  async enqueue(row: ImportRow): Promise<void> {
    const boss = await this.start();
    await boss.send(IMPORT_QUEUE, { import_id: row.id, organization_id: row.organization_id } satisfies JobData, { singletonKey: row.id });
    if (this.workerId) boss.notifyWorker(this.workerId);
  }

  private async runJob(data: JobData, retryCount: number): Promise<void> {
    const row = await this.imports.find(data.organization_id, data.import_id);
    if (!row || row.status !== 'running') return;
    try {
      if (!row.sealed_credentials) throw new ImportSourceError('the credentials are gone');
      const credentials = JSON.parse(this.secrets.open(row.sealed_credentials, CREDENTIALS_PURPOSE)) as Record<string, string>;
      const reader = readerFor(row.source, credentials, this.options.baseUrls(), this.options.sleep);
      if (row.dry_run) await this.dryRun(row, reader);
      else await this.realRun(row, reader);
    } catch (err) {
      if (err instanceof ImportSourceError || retryCount >= RETRY_LIMIT) {
        this.logger.warn({ err, importId: row.id }, 'import failed');
        await this.imports.finish(row.id, row.organization_id, 'failed', (err as Error).message);
        return;
      }
      this.logger.warn({ err, importId: row.id, retryCount }, 'import stopped; the job will be tried again, from its last committed page');
      throw err;
    }
  }

  private async realRun(row: ImportRow, reader: SourceReader): Promise<void> {
    const counts: Counts = { ...emptyCounts(), ...row.counts };
    const skipped: Skip[] = [...row.skipped];
    let pages = row.progress.pages;
    const startPhase = PHASES.indexOf(row.progress.phase as Phase);
    for (let p = Math.max(0, startPhase); p < PHASES.length; p++) {
      const phase = PHASES[p];
      let page: number | null = p === startPhase ? (row.progress.page ?? 1) : 1;
      while (page !== null) {
        const read = await reader.readPage(phase, page);
        pages++;
        const next = read.next;
        await this.imports.sql.transaction(async (sql) => {
          await new ImportWriter(sql, this.target(row), counts, skipped).write(read.batch);
          const progress = next === null ? { phase: PHASES[p + 1] ?? 'done', pages, page: 1 } : { phase, pages, page: next };
          await this.imports.progress(sql, row.id, row.organization_id, progress, counts, skipped);
        });
        page = next;
      }
    }
    await this.imports.finish(row.id, row.organization_id, 'succeeded', null, { phase: 'done', pages });
  }

  private async dryRun(row: ImportRow, reader: SourceReader): Promise<void> {
    const batches: SourceBatch[] = [];
    let pages = 0;
    for (const phase of PHASES) {
      let page: number | null = 1;
      while (page !== null) {
        const read = await reader.readPage(phase, page);
        batches.push(read.batch);
        pages++;
        await this.imports.progress(this.imports.sql, row.id, row.organization_id, { phase, pages }, emptyCounts(), []);
        page = read.next;
      }
    }
    const counts = emptyCounts();
    const skipped: Skip[] = [];
    await this.imports.progress(this.imports.sql, row.id, row.organization_id, { phase: 'writing', pages }, counts, skipped);
    try {
      await this.imports.sql.transaction(async (sql) => {
        const writer = new ImportWriter(sql, this.target(row), counts, skipped);
        for (const batch of batches) await writer.write(batch);
        throw new DryRunDone();
      });
    } catch (err) {
      if (!(err instanceof DryRunDone)) throw err;
    }
    await this.imports.progress(this.imports.sql, row.id, row.organization_id, { phase: 'done', pages }, counts, skipped);
    await this.imports.finish(row.id, row.organization_id, 'succeeded', null);
  }

  private target(row: ImportRow) {
    return { organizationId: row.organization_id, programId: row.program_id, source: row.source, importId: row.id };
  }
}
