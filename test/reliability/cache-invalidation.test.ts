import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHANGE_LISTENER_APPLICATION_NAME } from '../../server/src/db/change-notifications.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  call,
  createMerchantOn,
  describeWithPostgres,
  startService,
  stopService,
  waitFor,
  withDatabase,
  type ServiceProcess,
} from './support/service.js';

/** Both caches' TTLs (the config's maximum): only a change notification can explain a change seen sooner. */
const LONG_TTL_MS = 60_000;
/** How long the other instance may take to apply a change: notifications arrive in milliseconds. */
const PROPAGATION_BOUND_MS = 2_000;

/**
 * Two service processes on one database, each caching program rules and API keys for 60 s: a
 * change made through one applies on the other as soon as its change notification arrives
 * (db/change-notifications.ts), also after the other's listener connection was killed.
 */
describeWithPostgres('cache invalidation across two instances (LISTEN/NOTIFY)', () => {
  let db: TestDatabase;
  let a: ServiceProcess | undefined;
  let b: ServiceProcess | undefined;
  let merchant: Awaited<ReturnType<typeof createMerchantOn>>;
  let sale = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { API_KEY_CACHE_TTL_MS: String(LONG_TTL_MS), PROGRAM_RULE_CACHE_TTL_MS: String(LONG_TTL_MS) };
    [a, b] = await Promise.all([startService(db.url, env), startService(db.url, env)]);
    merchant = await createMerchantOn(a.url);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([stopService(a), stopService(b)]);
    await db?.stop();
  });

  /** The commission an instance computes for a new 100.00 sale by the merchant's affiliate. */
  async function commissionOn(instance: ServiceProcess): Promise<number> {
    const res = await call(instance.url, 'POST', '/api/conversions', {
      key: merchant.key,
      body: { external_id: `inv-${Date.now()}-${sale++}`, amount: 100, ref: merchant.slug },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.conversion.commission_amount as number;
  }

  async function setCommission(instance: ServiceProcess, value: number): Promise<void> {
    const res = await call(instance.url, 'PATCH', `/api/programs/${merchant.programId}`, {
      key: merchant.key,
      body: { commission_value: value },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }

  /** Milliseconds until `check` holds, polled; fails past PROPAGATION_BOUND_MS. */
  async function millisecondsUntil(check: () => Promise<boolean>, what: string): Promise<number> {
    const from = Date.now();
    await waitFor(check, PROPAGATION_BOUND_MS, what);
    return Date.now() - from;
  }

  it(
    'a program changed on A pays its new commission on B at once, not after the 60 s TTL',
    { timeout: 30_000 },
    async () => {
      await setCommission(a!, 30);
      // B reads the rule and caches it for 60 s.
      expect(await commissionOn(b!)).toBe(30);
      expect(await commissionOn(b!)).toBe(30);

      await setCommission(a!, 10);
      expect(await commissionOn(a!)).toBe(10);
      const ms = await millisecondsUntil(
        async () => (await commissionOn(b!)) === 10,
        'B to pay the new 10 % commission',
      );
      console.info(
        `[cache-invalidation] program change applied on the other instance after ${ms} ms (TTL ${LONG_TTL_MS} ms)`,
      );
      expect(await commissionOn(b!)).toBe(10);
    },
  );

  it('an API key revoked on A is refused by B at once, not after the 60 s TTL', { timeout: 30_000 }, async () => {
    const issued = await call(a!.url, 'POST', `/admin/organizations/${merchant.organizationId}/api-keys`, {
      admin: true,
    });
    expect(issued.status).toBe(201);
    const key: string = issued.body.data.api_key;
    // B verifies the key and caches it for 60 s.
    expect((await call(b!.url, 'GET', '/api/me', { key })).status).toBe(200);
    expect((await call(b!.url, 'GET', '/api/me', { key })).status).toBe(200);

    const revoked = await call(
      a!.url,
      'DELETE',
      `/admin/organizations/${merchant.organizationId}/api-keys/${issued.body.data.api_key_info.id}`,
      {
        admin: true,
      },
    );
    expect(revoked.status).toBe(200);
    expect((await call(a!.url, 'GET', '/api/me', { key })).status).toBe(401);
    const ms = await millisecondsUntil(
      async () => (await call(b!.url, 'GET', '/api/me', { key })).status === 401,
      'B to refuse the revoked key',
    );
    console.info(
      `[cache-invalidation] key revocation applied on the other instance after ${ms} ms (TTL ${LONG_TTL_MS} ms)`,
    );
    // The merchant's other key is untouched.
    expect((await call(b!.url, 'GET', '/api/me', { key: merchant.key })).status).toBe(200);
  });

  it(
    'an organization deleted on A: B refuses its key and its links at once, not after the 60 s TTL',
    { timeout: 60_000 },
    async () => {
      const gone = await createMerchantOn(a!.url);
      const click = (instance: ServiceProcess) =>
        fetch(`${instance.url}/public/organizations/${gone.organizationId}/clicks`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent':
              'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
          },
          body: JSON.stringify({ ref: gone.slug }),
        }).then((res) => res.status);
      // B verifies the key and resolves the link, and caches both for 60 s.
      expect((await call(b!.url, 'GET', '/api/me', { key: gone.key })).status).toBe(200);
      expect(await click(b!)).toBe(201);

      expect(
        (await call(a!.url, 'DELETE', `/admin/organizations/${gone.organizationId}`, { admin: true })).status,
      ).toBe(202);
      const ms = await millisecondsUntil(
        async () => (await call(b!.url, 'GET', '/api/me', { key: gone.key })).status === 401,
        'B to refuse the deleted organization’s key',
      );
      expect(await click(b!)).toBe(404);
      console.info(
        `[cache-invalidation] organization deletion applied on the other instance after ${ms} ms (TTL ${LONG_TTL_MS} ms)`,
      );
      await waitFor(
        async () =>
          (await call(a!.url, 'GET', `/admin/organizations/${gone.organizationId}/deletion`, { admin: true })).body.data
            .deletion.status === 'completed',
        30_000,
        'the deletion to complete',
      );
      expect((await call(b!.url, 'GET', '/api/me', { key: merchant.key })).status).toBe(200);
    },
  );

  it(
    'after its listener connection is killed, an instance reconnects and receives the next change',
    { timeout: 30_000 },
    async () => {
      const reconnects = (instance: ServiceProcess) =>
        instance.logs.filter((l) => /cache change listener: reconnected/.test(String(l.msg))).length;
      const before = reconnects(b!);
      const terminated = await withDatabase(db.url, async (client) => {
        const { rows } = await client.query(
          `select pg_terminate_backend(pid) as done from pg_stat_activity
          where datname = current_database() and application_name = $1`,
          [CHANGE_LISTENER_APPLICATION_NAME],
        );
        return rows.length;
      });
      expect(terminated).toBe(2); // A's and B's
      await waitFor(() => reconnects(b!) > before, 10_000, 'B to log its listener reconnected');
      expect(b!.logs.some((l) => /cache change listener: disconnected/.test(String(l.msg)))).toBe(true);

      expect(await commissionOn(b!)).toBe(10); // cached again on B, for 60 s
      await setCommission(a!, 20);
      const ms = await millisecondsUntil(
        async () => (await commissionOn(b!)) === 20,
        'B to pay 20 % after its listener reconnected',
      );
      console.info(
        `[cache-invalidation] after a reconnect, program change applied on the other instance after ${ms} ms`,
      );
    },
  );

  it(
    'an affiliate disabled on A stops attributing on B at once; re-enabled, its links work again',
    { timeout: 30_000 },
    async () => {
      const clickOn = async (instance: ServiceProcess) =>
        (await call(instance.url, 'POST', '/api/clicks', { key: merchant.key, body: { ref: merchant.slug } })).status;
      const setStatus = async (status: string) => {
        const res = await call(a!.url, 'PATCH', `/api/affiliates/${merchant.affiliateId}`, {
          key: merchant.key,
          body: { status },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      };
      // B caches the affiliate's status for 60 s.
      expect(await clickOn(b!)).toBe(201);
      await setStatus('disabled');
      expect(await clickOn(a!)).toBe(404);
      const ms = await millisecondsUntil(async () => (await clickOn(b!)) === 404, 'B to refuse the disabled affiliate');
      console.info(
        `[cache-invalidation] affiliate disabled on the other instance after ${ms} ms (TTL ${LONG_TTL_MS} ms)`,
      );
      await setStatus('active');
      await millisecondsUntil(async () => (await clickOn(b!)) === 201, 'B to attribute to the re-enabled affiliate');
    },
  );
});
