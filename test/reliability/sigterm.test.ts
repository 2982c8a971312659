import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  call,
  conversionCounts,
  conversionLoad,
  createMerchantOn,
  describeWithPostgres,
  startService,
  stopService,
  waitFor,
  type ServiceProcess,
} from './support/service.js';

/**
 * SIGTERM during a load: the process stops accepting, finishes what is in flight, closes its pool
 * and exits 0 within SHUTDOWN_TIMEOUT_MS; nothing it acknowledged is lost.
 */
describeWithPostgres('SIGTERM under load', () => {
  let db: TestDatabase;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await stopService(service);
    await db?.stop();
  });

  it('loses no acknowledged write and exits cleanly within the timeout', { timeout: 90_000 }, async () => {
    service = await startService(db.url, { SHUTDOWN_TIMEOUT_MS: '8000' });
    const merchant = await createMerchantOn(service.url);
    const running = service;
    const load = conversionLoad(() => running.url, merchant.key, merchant.slug, 12, `term-${Date.now()}`);
    await waitFor(() => load.result.acknowledged.length >= 200, 60_000, '200 acknowledged conversions');

    const ackedBefore = load.result.acknowledged.length;
    const signalledAt = Date.now();
    running.child.kill('SIGTERM');
    const exit = await running.exited;
    const stoppedInMs = Date.now() - signalledAt;
    const figures = await load.stop();

    expect(exit.code).toBe(0);
    expect(stoppedInMs).toBeLessThan(8_000);
    const logMessages = running.logs.map((l) => l.msg);
    expect(logMessages).toContain('stopped');
    expect(running.logs.some((l) => l.msg === 'shutdown timed out; exiting')).toBe(false);

    const counts = await conversionCounts(db.url, merchant.organizationId);
    const missing = figures.acknowledged.filter((id) => counts.get(id) !== 1);
    console.info(
      `[sigterm] sent ${figures.sent.length}, acknowledged ${figures.acknowledged.length} (${figures.acknowledged.length - ackedBefore} after SIGTERM), ` +
        `stored ${counts.size}, missing ${missing.length}, exit ${exit.code} in ${stoppedInMs} ms, statuses ${JSON.stringify(figures.statuses)}`,
    );
    expect(missing).toEqual([]);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(figures.malformedErrors).toEqual([]);
    expect(figures.statuses['500'] ?? 0).toBe(0);
    // Whatever was stored but not acknowledged is only what was in flight when connections closed.
    expect(counts.size - figures.acknowledged.length).toBeLessThanOrEqual(12);

    // A new process on the same database serves the same records.
    service = await startService(db.url);
    const last = figures.acknowledged[figures.acknowledged.length - 1];
    const res = await call(service.url, 'GET', `/api/conversions/${last}`, { key: merchant.key });
    expect(res.status).toBe(200);
  });

  it('answers /ready 503 while draining, then refuses connections', { timeout: 60_000 }, async () => {
    const draining = await startService(db.url, { SHUTDOWN_DRAIN_DELAY_MS: '1500' });
    try {
      expect((await call(draining.url, 'GET', '/ready')).status).toBe(200);
      draining.child.kill('SIGTERM');
      await waitFor(
        async () => (await call(draining.url, 'GET', '/ready')).status === 503,
        1_400,
        '/ready to answer 503',
      );
      const ready = await call(draining.url, 'GET', '/ready');
      expect(ready.body).toEqual({ success: false, message: 'Shutting down' });
      expect(ready.headers.get('connection')).toBe('close');
      // /health still says the process is up while it drains.
      expect((await call(draining.url, 'GET', '/health')).status).toBe(200);
      const exit = await draining.exited;
      expect(exit.code).toBe(0);
      await expect(call(draining.url, 'GET', '/health', { timeoutMs: 2_000 })).rejects.toThrow();
    } finally {
      await stopService(draining);
    }
  });
});
