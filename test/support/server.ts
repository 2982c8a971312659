import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp, type Services } from '../../server/src/app.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

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

async function start(): Promise<TestServer> {
  const db = await createTestDatabase();
  const { app, services } = createApp({
    orm: db.orm,
    config: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, API_KEY_CACHE_TTL_MS: 5_000 },
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  // Databases left on a real PostgreSQL are dropped by the global teardown (global-setup.ts).
  server.unref();
  return { baseUrl: `http://127.0.0.1:${port}`, db, services };
}
