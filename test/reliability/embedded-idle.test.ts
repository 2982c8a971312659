import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../server/src/db/embedded.js';
import { closeOrm, connectOrm, ormOptions } from '../../server/src/db/orm.js';
import { ADMIN_TOKEN, call, createMerchantOn } from './support/service.js';

/** Short, so the test idles past it in seconds; the product's pool (pg-pool's default) drops idle connections after 10 s the same way. */
const POOL_IDLE_TIMEOUT_MS = 300;

/**
 * The embedded database (what `npm start` runs without DATABASE_URL) is one PostgreSQL session
 * behind a socket: every connection the pool opens lands in that same session, and anything a
 * statement leaves on a connection (a named prepared statement) is still there when the pool has
 * dropped the connection and opened a new one. This runs on the embedded database whatever
 * DATABASE_URL says, idles past the pool's idle timeout (the pool drops its connection), then
 * writes on every hot route, twice, so that each route prepares its statements again.
 */
describe('embedded database: writes after the pool dropped its idle connection', () => {
  let embedded: EmbeddedPostgres;
  let orm: MikroORM;
  let server: Server;
  let baseUrl: string;

  beforeAll(async () => {
    embedded = await startEmbeddedPostgres();
    const options = ormOptions(embedded.url, 1);
    orm = await connectOrm({ ...options, pool: { ...options.pool, idleTimeoutMillis: POOL_IDLE_TIMEOUT_MS } });
    await orm.migrator.up();
    const { listener } = createApp({
      orm,
      config: { ADMIN_TOKEN, PUBLIC_BASE_URL: 'http://localhost:3000', API_KEY_CACHE_TTL_MS: 5_000 },
    });
    server = await new Promise<Server>((resolve) => {
      const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    if (orm) await closeOrm(orm, true);
    await embedded?.stop();
  });

  const idle = () => new Promise((resolve) => setTimeout(resolve, POOL_IDLE_TIMEOUT_MS * 4));

  it('clicks, customers, conversions by click and by customer, and renewals all answer 2xx after each idle period', async () => {
    // Start past the idle timeout of the migrations' connection: a first request landing just as
    // the pool drops it would race its close (the embedded server takes one connection at a time).
    await idle();
    const merchant = await createMerchantOn(baseUrl);
    const post = (path: string, body: unknown) => call(baseUrl, 'POST', path, { key: merchant.key, body });
    for (let round = 0; round < 3; round++) {
      await idle();
      const click = await post('/api/clicks', { ref: merchant.slug });
      expect(click.status, JSON.stringify(click.body)).toBe(201);
      const cookieId: string = click.body.data.click.cookie_id;

      const customerId = `cus_idle_${round}`;
      const customer = await post('/api/customers', { customer_id: customerId, cookie_id: cookieId });
      expect(customer.status, JSON.stringify(customer.body)).toBe(201);

      const secondClick = await post('/api/clicks', { ref: merchant.slug });
      const byClick = await post('/api/conversions', {
        external_id: `by_click_${round}`,
        amount: 10,
        cookie_id: secondClick.body.data.click.cookie_id,
      });
      expect(byClick.status, JSON.stringify(byClick.body)).toBe(201);

      await idle();
      const first = await post('/api/conversions', {
        external_id: `first_${round}`,
        amount: 100,
        customer_id: customerId,
      });
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      await idle();
      const renewal = await post('/api/conversions', {
        external_id: `renewal_${round}`,
        amount: 100,
        customer_id: customerId,
      });
      expect(renewal.status, JSON.stringify(renewal.body)).toBe(201);
      expect(renewal.body.data.conversion.kind).toBe('recurring');
    }
  });
});
