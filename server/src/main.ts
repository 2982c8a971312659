import type { Server } from 'node:http';
import pino from 'pino';
import { createApp } from './app.js';
import { loadConfig } from './config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded.js';
import { initOrm } from './db/orm.js';

const config = loadConfig();
const logger = pino({ level: config.LOG_LEVEL });

let embedded: EmbeddedPostgres | undefined;
let databaseUrl = config.DATABASE_URL;
if (!databaseUrl) {
  embedded = await startEmbeddedPostgres(config.DATA_DIR);
  databaseUrl = embedded.url;
  logger.warn({ dataDir: config.DATA_DIR }, 'DATABASE_URL is not set: using the embedded PostgreSQL (PGlite). Fine for trying the service, not for production.');
}

// PGlite is a single connection: one pooled connection, or transactions would interleave.
const orm = await initOrm(databaseUrl, embedded ? 1 : config.DB_POOL_MAX);
const { app } = createApp({ orm, config, logger });
if (!config.ADMIN_TOKEN) logger.warn('ADMIN_TOKEN is not set: /admin/* answers 401 and no organization can be created.');

const server: Server = app.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info({ port }, `affiliate attribution service listening on http://localhost:${port}`);
});
server.keepAliveTimeout = 65_000;

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
  const forced = setTimeout(() => {
    logger.error('shutdown timed out; exiting');
    process.exit(1);
  }, config.SHUTDOWN_TIMEOUT_MS);
  forced.unref();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await orm.close();
  await embedded?.stop();
  clearTimeout(forced);
  logger.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
