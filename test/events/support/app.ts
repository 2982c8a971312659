import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import pino from 'pino';
import { createApp } from '../../../server/src/app.js';
import { EventDelivery, type DeliveryOptions } from '../../../server/src/modules/events/delivery.js';
import { SecretBox } from '../../../server/src/security/secret-box.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';

export const ADMIN = 'events-admin-token-0123456789abcdef';
export const TEST_ENCRYPTION_KEY = 'a'.repeat(64);

export interface EventsApp {
  baseUrl: string;
  db: TestDatabase;
  delivery: EventDelivery;
  stop(): Promise<void>;
}

/** The service on a fresh database, with http:// and 127.0.0.1 endpoints allowed, secrets encrypted, and delivery running in process. */
export async function startEventsApp(options: DeliveryOptions = {}): Promise<EventsApp> {
  const db = await createTestDatabase();
  const { listener } = createApp({
    orm: db.orm,
    config: {
      ADMIN_TOKEN: ADMIN,
      PUBLIC_BASE_URL: 'http://localhost:3000',
      API_KEY_CACHE_TTL_MS: 5_000,
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      WEBHOOK_ALLOW_PRIVATE_URLS: true,
    },
  });
  const server: Server = await new Promise((resolve) => {
    const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
  });
  const delivery = new EventDelivery(db.orm, new SecretBox(TEST_ENCRYPTION_KEY), pino({ level: 'silent' }), {
    allowPrivateUrls: true,
    superviseIntervalSeconds: 2,
    ...options,
  });
  await delivery.start();
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    db,
    delivery,
    async stop() {
      await delivery.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.stop();
    },
  };
}

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; admin?: boolean } = {},
) {
  const headers: Record<string, string> = {};
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.admin) headers.authorization = `Bearer ${ADMIN}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(baseUrl + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** An organization with a program and an affiliate; `api` bound to its key. */
export async function merchant(baseUrl: string) {
  const org = await call(baseUrl, 'POST', '/admin/organizations', {
    admin: true,
    body: { name: `Events ${Date.now()}` },
  });
  const key: string = org.body.data.api_key;
  const api = (method: string, path: string, body?: unknown) => call(baseUrl, method, path, { key, body });
  const program = await api('POST', '/api/programs', { name: 'Main', commission_value: 25 });
  const slug = `ev-${Math.random().toString(36).slice(2, 10)}`;
  const affiliate = await api('POST', '/api/affiliates', {
    email: `${slug}@example.com`,
    program_id: program.body.data.program.id,
    slug,
  });
  return {
    organizationId: org.body.data.organization.id as string,
    key,
    api,
    slug,
    programId: program.body.data.program.id as string,
    affiliateId: affiliate.body.data.affiliate.id as string,
  };
}
