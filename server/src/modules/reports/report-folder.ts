import type { Logger } from 'pino';
import type { ReportsRepository } from './reports.repository.js';

export interface ReportFolderOptions {
  /** Time between fold rounds; default 10 s. */
  intervalMs?: number;
  logger?: Logger;
}

/** Organizations folded per search: a round searches again until none is left. */
const ORGANIZATIONS_PER_SEARCH = 100;

/**
 * The background step that folds each organization's report deltas into its summaries
 * (report-fold.ts), in every instance: folds of one organization take turns on its row lock, and
 * each organization's fold is its own short transaction. Nothing outside the service, and the
 * same on the embedded database. Reports are exact without it (they read the deltas not folded
 * yet); it only keeps them fast.
 */
export class ReportFolder {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  readonly intervalMs: number;

  constructor(
    private readonly reports: ReportsRepository,
    private readonly options: ReportFolderOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 10_000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops the rounds; resolves once a round in progress has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /**
   * Folds every organization with deltas due, until none is left (or `maxSearches` searches ran,
   * or the folder is stopped). A failed organization is logged and skipped until the next round.
   * Answers how many organizations were folded.
   */
  async catchUp(maxSearches = 1_000): Promise<number> {
    let folded = 0;
    const failed = new Set<string>();
    for (let search = 0; search < maxSearches; search++) {
      const due = (await this.reports.organizationsToFold(ORGANIZATIONS_PER_SEARCH + failed.size)).filter(
        (id) => !failed.has(id),
      );
      if (due.length === 0) return folded;
      for (const organizationId of due) {
        try {
          await this.reports.fold(organizationId);
          folded++;
        } catch (err) {
          failed.add(organizationId);
          this.options.logger?.error({ err, organizationId }, 'report fold failed');
        }
      }
    }
    return folded;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.catchUp()
        .then(() => undefined)
        .catch((err: unknown) => this.options.logger?.error({ err }, 'report fold failed'))
        .finally(() => {
          this.running = undefined;
          this.schedule(this.intervalMs);
        });
    }, delayMs);
    this.timer.unref();
  }
}
