import type { Logger } from 'pino';

/** One successful attempt to record: the delivery, at its attempt number, answered `status` (and `body`) at `at`. */
export interface Success {
  id: string;
  attempts: number;
  at: Date;
  status: number;
  body: string | null;
}

/**
 * Successful attempts are recorded together: one statement (`write`) per `max` of them, or
 * `afterMs` after the first one waiting, whichever comes first, so that recording costs a
 * statement per batch rather than one per delivery. `record` resolves once its batch is written,
 * or could not be (logged: such an attempt is made again by its backstop job, same webhook-id).
 */
export class SuccessBatch {
  private waiting: { success: Success; recorded: () => void }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (batch: Success[]) => Promise<unknown>,
    private readonly logger: Logger,
    private readonly options: { max: number; afterMs: number },
  ) {}

  record(success: Success): Promise<void> {
    return new Promise<void>((recorded) => {
      this.waiting.push({ success, recorded });
      if (this.waiting.length >= this.options.max) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.afterMs);
    });
  }

  /** What waits is not written (a stop that gave up): its attempts are made again. */
  drop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const dropped = this.waiting;
    this.waiting = [];
    dropped.forEach((w) => w.recorded());
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length === 0) return;
    this.write(batch.map((w) => w.success)).then(
      () => batch.forEach((w) => w.recorded()),
      (err: unknown) => {
        this.logger.warn(
          { err, deliveries: batch.length },
          'outbound events: successful attempts could not be recorded; they will be made again',
        );
        batch.forEach((w) => w.recorded());
      },
    );
  }
}
