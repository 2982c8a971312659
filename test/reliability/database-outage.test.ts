import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  call,
  conversionCounts,
  conversionLoad,
  createMerchantOn,
  describeWithPostgres,
  isEnvelope,
  startService,
  startTcpProxy,
  stopService,
  waitFor,
  type ServiceProcess,
} from './support/service.js';

/**
 * PostgreSQL goes away under load and comes back. The machine's PostgreSQL is shared with other
 * test runs, so it is not restarted: the service reaches it through a TCP proxy the test cuts
 * (every connection reset, new ones refused, as during a restart) and restores.
 */
describeWithPostgres('PostgreSQL outage under load', () => {
  let db: TestDatabase;
  let service: ServiceProcess | undefined;
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    const target = new URL(db.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  });
  afterAll(async () => {
    await stopService(service);
    await proxy?.close();
    await db?.stop();
  });

  it(
    'answers 503 in the envelope while it is down, serves again when it is back, loses nothing acknowledged',
    { timeout: 120_000 },
    async () => {
      const viaProxy = new URL(db.url);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      service = await startService(viaProxy.toString());
      const pid = service.pid;
      const merchant = await createMerchantOn(service.url);
      const running = service;
      const load = conversionLoad(() => running.url, merchant.key, merchant.slug, 8, `outage-${Date.now()}`);
      await waitFor(() => load.result.acknowledged.length >= 100, 60_000, '100 acknowledged conversions');

      // Down: every open connection reset, new ones refused.
      proxy.cut();
      const before = { ...load.result.statuses };
      await waitFor(
        () => (load.result.statuses['503'] ?? 0) - (before['503'] ?? 0) >= 20,
        20_000,
        '20 answers 503 while down',
      );
      const ready = await call(running.url, 'GET', '/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ success: false, message: 'Database unavailable' });
      expect((await call(running.url, 'GET', '/health')).status).toBe(200);
      const down = await call(running.url, 'POST', '/api/conversions', {
        key: merchant.key,
        body: { external_id: `probe-${Date.now()}`, amount: 1, ref: merchant.slug },
      });
      // The API key is cached, so the request reaches the database and fails there: 503, retryable.
      expect(down.status).toBe(503);
      expect(down.body).toEqual({ success: false, message: 'Service temporarily unavailable; safe to retry' });
      expect(down.headers.get('retry-after')).toBe('1');

      // Back: the same process serves again, with no restart.
      proxy.restore();
      const ackedAtRestore = load.result.acknowledged.length;
      await waitFor(
        () => load.result.acknowledged.length >= ackedAtRestore + 100,
        30_000,
        '100 more acknowledged after restore',
      );
      await waitFor(async () => (await call(running.url, 'GET', '/ready')).status === 200, 10_000, '/ready 200 again');
      const figures = await load.stop();
      expect(running.child.exitCode).toBeNull();
      expect(running.pid).toBe(pid);

      const counts = await conversionCounts(db.url, merchant.organizationId);
      const missing = figures.acknowledged.filter((id) => counts.get(id) !== 1);
      console.info(
        `[outage] sent ${figures.sent.length}, acknowledged ${figures.acknowledged.length}, stored ${counts.size}, missing ${missing.length}, ` +
          `statuses ${JSON.stringify(figures.statuses)}`,
      );
      expect(missing).toEqual([]);
      expect(figures.malformedErrors).toEqual([]);
      // Failures while down are 503 (retryable), in the envelope; never a bare 500.
      expect(figures.statuses['500'] ?? 0).toBe(0);
      expect(Object.keys(figures.statuses).every((s) => ['200', '201', '503', 'error'].includes(s))).toBe(true);
      // No SQL, stack trace or driver message reached a client: the load saw only the envelope.
      expect(isEnvelope(down.body)).toBe(true);
    },
  );
});
