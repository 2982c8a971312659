// First: an unsupported Node.js stops here with what to do (../node-version.mjs), before the rest runs.
import '../node-version.mjs';
import type { Server } from 'node:http';
import { createApp, type CacheInvalidation } from './app.js';
import { loadConfig } from './config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded.js';
import { closeOrm, databaseTimeouts, initOrm } from './db/orm.js';
import { Readiness } from './http/health.js';
import { createLogger } from './http/logging.js';
import { createHttpServer } from './http/http-server.js';
import { createRateLimiterFactory } from './http/rate-limit-stores.js';
import { startEventDelivery } from './jobs/event-delivery.js';
import { PayoutReconciliation } from './jobs/payout-reconciliation.js';

const config = loadConfig();
// JSON lines on stdout; request lines carry the request id (http/logging.ts); secrets redacted.
const logger = createLogger(config.LOG_LEVEL);

process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));
process.on('uncaughtException', (err) => {
  // State is unknown after an uncaught exception: log it and exit; the supervisor restarts us and
  // every acknowledged write is already committed.
  logger.fatal({ err }, 'uncaught exception; exiting');
  process.exit(1);
});

let embedded: EmbeddedPostgres | undefined;
let databaseUrl = config.DATABASE_URL;
if (!databaseUrl) {
  embedded = await startEmbeddedPostgres(config.DATA_DIR);
  databaseUrl = embedded.url;
  logger.warn(
    { dataDir: config.DATA_DIR },
    'DATABASE_URL is not set: using the embedded PostgreSQL (PGlite). Fine for trying the service, not for production.',
  );
}

// PGlite is a single connection: one pooled connection, or transactions would interleave.
// Every wait for the database is bounded (DB_*_TIMEOUT_MS): a frozen database answers 503, never a hang.
// Instances starting together apply pending migrations once, under a lock (db/orm.ts, migrateOnce).
const orm = await initOrm(databaseUrl, embedded ? 1 : config.DB_POOL_MAX, databaseTimeouts(config), {
  concurrentStarts: !embedded,
  replicaUrls: config.DATABASE_REPLICA_URLS,
  // Once per outage, not per read (db/replica-reads.ts); database_replica_fallback_reads_total counts the reads.
  replicaEvents: {
    onReplicaDown: (replica, err) =>
      logger.warn(
        { err, replica },
        'read replica unreachable: its reads (lists, reports) go to the primary until it answers again',
      ),
    onReplicaBack: (replica, downForMs) =>
      logger.info({ replica, downForMs }, 'read replica answers again: its reads go back to it'),
  },
  onWait: () => logger.info('another instance is applying migrations; waiting for it'),
  onStatementTimeoutRefused: (err) =>
    logger.warn(
      { err, code: (err as { code?: unknown }).code },
      'the database (PgBouncer?) refuses the statement_timeout start-up parameter: connecting without it. PostgreSQL no longer bounds statements unless the role does (ALTER ROLE ... SET statement_timeout); DB_QUERY_TIMEOUT_MS still bounds every wait. Set DB_STATEMENT_TIMEOUT_MS=0 to silence this.',
    ),
});
const readiness = new Readiness();
// Redis when REDIS_URL is set, else the real PostgreSQL (both shared by every instance), else memory.
const rateLimiters = createRateLimiterFactory(config, logger, orm);
logger.info(
  { store: rateLimiters.store },
  `rate limits are counted in ${rateLimiters.store === 'memory' ? 'memory, per instance' : `${rateLimiters.store}, shared by every instance`}`,
);
// Program rules and API keys are cached per instance; a change reaches every instance by
// LISTEN/NOTIFY on a dedicated session connection (db/change-notifications.ts). The embedded
// database accepts one connection, hence serves one instance: nothing to listen for there.
const cacheInvalidation: CacheInvalidation = embedded
  ? 'this-instance-only'
  : { listenUrl: config.DATABASE_DIRECT_URL ?? databaseUrl, connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS };
if (embedded)
  logger.info(
    'embedded database: one instance, so cached program rules and API keys are invalidated on this instance only',
  );
const { listener, changeListener, services, importRunner, metrics, mailQueue, partnerNotices } = createApp({
  orm,
  config,
  logger,
  readiness,
  rateLimiters,
  cacheInvalidation,
});
await changeListener?.start();
// Outbound events: delivered from this process unless WEBHOOK_DELIVERY=off (then by `npm run worker`).
const eventDelivery =
  config.WEBHOOK_DELIVERY === 'in-process'
    ? await startEventDelivery(orm, config, logger, metrics.jobFailed)
    : undefined;
// Report summaries are folded in the background by whichever instance holds the fold's lock.
services.reportFolder.start();
// Imports left running by the previous process go on from their last committed page (modules/imports).
await importRunner.start();
// E-mails queued before a restart (or while the mail server was down) go out from here.
await mailQueue?.start();
// Partners' e-mails of commissions earned and payouts sent, once each, after their transactions commit.
partnerNotices.start();
// Deletions of organizations and of test data left running go on (modules/organizations/deletion-runner.ts).
await services.dataDeletions.start();
// Payouts sent through PayPal, Stripe or Wise: their providers asked periodically about those in flight.
const payoutReconciliation = new PayoutReconciliation(orm, services.payoutSender, logger);
await payoutReconciliation.start();
if (!config.ADMIN_TOKEN)
  logger.warn('ADMIN_TOKEN is not set: /admin/* answers 401 and no organization can be created.');
if (config.publicBaseUrlDerived) {
  logger.warn(
    { publicBaseUrl: config.PUBLIC_BASE_URL },
    `PUBLIC_BASE_URL is not set: the links the service hands out (invitations, password resets, sign-in links) point at ${config.PUBLIC_BASE_URL}, which suits this machine only, and the dashboard signs in only from there; set PUBLIC_BASE_URL to the address people reach the service at`,
  );
}

const server: Server = createHttpServer(listener, logger).listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  // GET / leads to the dashboard (http/dashboard.ts): the address to open is the one printed.
  logger.info(
    { port },
    `affiliate attribution service listening on http://localhost:${port}: open http://localhost:${port}/ for the dashboard`,
  );
});

let stopping = false;
/** Set during the drain delay: ends it early (a second signal, e.g. Ctrl-C twice). */
let endDrainDelay: (() => void) | undefined;
/**
 * Graceful stop: /ready turns 503 and, for SHUTDOWN_DRAIN_DELAY_MS, the instance keeps serving
 * while load balancers notice and stop routing here; then the listener closes, requests in flight
 * finish (their writes commit before they are acknowledged), keep-alive connections are closed as
 * they turn idle, then the pool closes. Past SHUTDOWN_TIMEOUT_MS the process exits anyway: a
 * request cut then was never acknowledged, and every write is idempotent, so the client's retry is
 * safe. A second signal skips what is left of the drain delay.
 */
async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    endDrainDelay?.();
    return;
  }
  stopping = true;
  readiness.draining = true;
  logger.info(
    { signal, drainDelayMs: config.SHUTDOWN_DRAIN_DELAY_MS },
    config.SHUTDOWN_DRAIN_DELAY_MS > 0
      ? 'shutting down: /ready answers 503 while load balancers stop routing here (a second signal skips the wait), then no new connections'
      : 'shutting down: no new connections, finishing in-flight requests',
  );
  const forced = setTimeout(() => {
    logger.error('shutdown timed out; exiting');
    process.exit(1);
  }, config.SHUTDOWN_TIMEOUT_MS + config.SHUTDOWN_DRAIN_DELAY_MS);
  forced.unref();
  if (config.SHUTDOWN_DRAIN_DELAY_MS > 0) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, config.SHUTDOWN_DRAIN_DELAY_MS);
      endDrainDelay = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    endDrainDelay = undefined;
    logger.info('shutting down: no new connections, finishing in-flight requests');
  }
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    // A connection busy at close() turns idle once its response is sent: close it then.
    const reaper = setInterval(() => server.closeIdleConnections(), 50);
    server.once('close', () => clearInterval(reaper));
  });
  await changeListener?.close();
  await eventDelivery?.stop();
  await importRunner.stop();
  await partnerNotices.stop();
  await mailQueue?.stop();
  await services.dataDeletions.stop();
  await payoutReconciliation.stop();
  await services.reportFolder.stop();
  await closeOrm(orm);
  await rateLimiters.close();
  await embedded?.stop();
  clearTimeout(forced);
  logger.info('stopped');
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
