import type { AddressInfo } from 'node:net';
import { type Server, createServer } from 'node:http';
import pino from 'pino';
import { createApp, type AppDeps, type Services } from '../../server/src/app.js';
import { configureHttpServer } from '../../server/src/http/http-server.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
/** PUBLIC_BASE_URL of the apps whose tests follow no link (a service's own tests use its address). */
export const TEST_PUBLIC_BASE_URL = 'http://localhost:3000';
/** ENCRYPTION_KEY of the shared test server: secrets and tax forms are sealed as in production (tax forms need it). */
export const TEST_ENCRYPTION_KEY = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

export interface TestServer {
  baseUrl: string;
  db: TestDatabase;
  services: Services;
}

let shared: Promise<TestServer> | undefined;

/** The worker's server on the worker's database, started on first use and stopped at the end. */
export function testServer(): Promise<TestServer> {
  shared ??= start();
  return shared;
}

/**
 * A server on a database of its own, for a test that must be alone on its database (e.g. a job
 * queue's worker of the test's own: the worker's shared database may hold the app's worker too).
 */
export const isolatedTestServer = (): Promise<TestServer> => start();

async function start(): Promise<TestServer> {
  const db = await createTestDatabase();
  // Listening first: the app's PUBLIC_BASE_URL (the base of its links) is the address it serves at.
  const server: Server = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  const { listener, services } = createApp({
    orm: db.orm,
    // Webhook endpoints on 127.0.0.1 (no delivery runs here: test/events starts its own).
    // Every test is 127.0.0.1: the per-address sign-in limit (dashboard, partner portal) has tests of its own.
    config: {
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      API_KEY_CACHE_TTL_MS: 5_000,
      WEBHOOK_ALLOW_PRIVATE_URLS: true,
      SIGN_IN_RATE_LIMIT_MAX: 1000,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    } as AppDeps['config'],
  });
  server.on('request', listener);
  // The HTTP settings of production (main.ts). Among them a keep-alive timeout far above the
  // client's (undici reuses idle sockets for up to 4 s): with Node's default 5 s, late timers on a
  // saturated CI machine let the server close a socket the client is reusing (ECONNRESET).
  configureHttpServer(server, pino({ level: 'silent' }));
  // Databases left on a real PostgreSQL are dropped by the global teardown (global-setup.ts).
  server.unref();
  return { baseUrl: `http://127.0.0.1:${port}`, db, services };
}
