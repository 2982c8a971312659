// First: an unsupported Node.js stops here with what to do (../../node-version.mjs), before the rest runs.
import '../../node-version.mjs';
import { loadConfig } from '../config.js';
import { closeOrm, databaseTimeouts, initOrm } from '../db/orm.js';
import { createLogger } from '../http/logging.js';
import { startEventDelivery } from './event-delivery.js';

/**
 * `npm run worker`: delivers outbound events in a process of its own, for deployments that scale
 * delivery apart from the API (run the API with WEBHOOK_DELIVERY=off, or leave it on: any number
 * of processes share the work through the database). Needs DATABASE_URL: the embedded database
 * lives inside the service process, which then delivers in process.
 */
const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL);
if (!config.DATABASE_URL) {
  logger.fatal(
    'npm run worker needs DATABASE_URL (the embedded database is reachable only from the service process, which delivers events itself)',
  );
  process.exit(1);
}
process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));

const orm = await initOrm(config.DATABASE_URL, config.DB_POOL_MAX, databaseTimeouts(config));
const delivery = await startEventDelivery(orm, config, logger);
logger.info('outbound events worker running');

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'worker stopping: finishing attempts in flight');
  const forced = setTimeout(() => process.exit(1), config.SHUTDOWN_TIMEOUT_MS + 15_000);
  forced.unref();
  await delivery.stop();
  await closeOrm(orm);
  clearTimeout(forced);
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
