import type { MikroORM } from '@mikro-orm/postgresql';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { payoutRailSettings } from '../config.js';
import type { PayoutSender } from '../modules/payouts/payout-sender.js';
import { startQueue } from './queue.js';

export const PAYOUT_RECONCILE_QUEUE = 'payout-reconcile';

/**
 * The periodic reconciliation of payouts in flight (modules/payouts/payout-sender.ts reconcile):
 * a pg-boss job every PAYOUT_RECONCILE_INTERVAL_SECONDS (default 30), queued by every instance
 * with one singleton key per interval, so that however many instances run, one pass runs per
 * interval, and a pass whose worker died is handed out again (pg-boss expiry). Each pass asks the
 * providers about every `processing` payout (by its reference, else by its idempotency key), so an
 * outcome is recorded within about the interval even when its webhook never arrives.
 */
export class PayoutReconciliation {
  private boss: PgBoss | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly sender: PayoutSender,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const interval = payoutRailSettings().PAYOUT_RECONCILE_INTERVAL_SECONDS;
    const boss = await startQueue(this.orm, this.logger);
    this.boss = boss;
    await boss.createQueue(PAYOUT_RECONCILE_QUEUE, { retryLimit: 0, expireInSeconds: Math.max(60, interval * 4) });
    await boss.work(
      PAYOUT_RECONCILE_QUEUE,
      { batchSize: 1, pollingIntervalSeconds: Math.min(interval, 5) },
      async () => {
        const { asked } = await this.sender.reconcile();
        if (asked > 0) this.logger.info({ asked }, 'payouts in flight: asked their providers');
      },
    );
    const enqueue = () =>
      boss
        .send(PAYOUT_RECONCILE_QUEUE, {}, { singletonKey: PAYOUT_RECONCILE_QUEUE, singletonSeconds: interval })
        .catch((err) => this.logger.warn({ err }, 'payout reconciliation: could not queue a pass'));
    void enqueue();
    this.timer = setInterval(enqueue, interval * 1000);
    this.timer.unref();
    this.logger.info({ intervalSeconds: interval }, 'payout reconciliation started');
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sender.idle();
    await this.boss?.stop({ graceful: true, timeout: 5_000, close: false });
  }
}
