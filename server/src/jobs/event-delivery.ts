import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { EventDelivery } from '../modules/events/delivery.js';
import type { JobFailed } from '../modules/clicks/click-retention.js';
import { SecretBox } from '../security/secret-box.js';

/**
 * Starts the delivery of outbound events (the outbox relay and the pg-boss workers) on this ORM,
 * for the service process (main.ts, unless WEBHOOK_DELIVERY=off) or the worker process (worker.ts).
 */
export async function startEventDelivery(
  orm: MikroORM,
  config: Pick<Config, 'ENCRYPTION_KEY' | 'WEBHOOK_ALLOW_PRIVATE_URLS' | 'WEBHOOK_RETENTION_DAYS'>,
  logger: Logger,
  jobFailed?: JobFailed,
): Promise<EventDelivery> {
  if (!config.ENCRYPTION_KEY) {
    logger.warn(
      'ENCRYPTION_KEY is not set: webhook endpoint and payment-provider signing secrets and payout-rail credentials are stored unencrypted; tax form uploads are refused.',
    );
  }
  if (config.WEBHOOK_ALLOW_PRIVATE_URLS) {
    logger.warn(
      'WEBHOOK_ALLOW_PRIVATE_URLS=true: webhook endpoints may use http:// and private addresses. Development only.',
    );
  }
  const delivery = new EventDelivery(orm, new SecretBox(config.ENCRYPTION_KEY), logger, {
    allowPrivateUrls: config.WEBHOOK_ALLOW_PRIVATE_URLS,
    retentionDays: config.WEBHOOK_RETENTION_DAYS,
    jobFailed,
  });
  await delivery.start();
  logger.info('outbound events: delivery started');
  return delivery;
}
