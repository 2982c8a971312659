import type { Logger } from 'pino';
import type { ReportsRepository } from './reports.repository.js';

export interface ReportFolderOptions {
  /** Time between fold rounds; default 10 s. */
  intervalMs?: number;
  /**
   * Rows created less than this long ago are left to the live part: a row is committed within
   * this much of its created_at (the service's transactions are bounded by its database
   * timeouts, seconds). Default 60 s.
   */
  lagSeconds?: number;
  logger?: Logger;
}

const MIN_SPAN_SECONDS = 60;
const MAX_SPAN_SECONDS = 31 * 86_400;

/**
 * The background step that folds raw rows into the report summaries (report_fold, in the baseline
 * migration's baseline/report-functions.ts), in every instance: each round tries the fold's advisory lock, so one
 * instance folds at a time and the others skip. A round catches up in steps of `span` seconds of
 * created_at, each its own short transaction; the span doubles after a quick step and halves
 * after a failed one, so a burst of rows is folded in pieces. Nothing outside the service, and
 * the same on the embedded database. Reports are exact without it (what is not folded is read
 * live); it only keeps them fast.
 */
export class ReportFolder {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private spanSeconds = 86_400;
  readonly intervalMs: number;
  readonly lagSeconds: number;

  constructor(
    private readonly reports: ReportsRepository,
    private readonly options: ReportFolderOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 10_000;
    this.lagSeconds = options.lagSeconds ?? 60;
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
   * Folds until the watermark is within one interval of now - lag (or another instance holds the
   * fold). Answers how many steps ran.
   */
  async catchUp(maxSteps = 10_000): Promise<number> {
    let steps = 0;
    while (steps < maxSteps) {
      const started = Date.now();
      let watermark: Date | undefined;
      try {
        watermark = await this.reports.fold(this.lagSeconds, this.spanSeconds);
      } catch (err) {
        this.spanSeconds = Math.max(MIN_SPAN_SECONDS, Math.floor(this.spanSeconds / 2));
        this.options.logger?.warn(
          { err, spanSeconds: this.spanSeconds },
          'report fold failed; retrying with a shorter span',
        );
        if (this.spanSeconds === MIN_SPAN_SECONDS) throw err;
        continue;
      }
      steps++;
      if (watermark === undefined) return steps;
      const elapsed = Date.now() - started;
      if (elapsed < 1_000) this.spanSeconds = Math.min(MAX_SPAN_SECONDS, this.spanSeconds * 2);
      else if (elapsed > 5_000) this.spanSeconds = Math.max(MIN_SPAN_SECONDS, Math.floor(this.spanSeconds / 2));
      const behind = Date.now() - this.lagSeconds * 1_000 - new Date(watermark).getTime();
      if (!(behind > this.intervalMs)) return steps;
    }
    return steps;
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
