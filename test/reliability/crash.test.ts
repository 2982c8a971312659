import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  withDatabase,
  type ServiceProcess,
} from './support/service.js';

/**
 * kill -9 under a conversion load: an acknowledged conversion was committed before its 2xx left
 * the process, so after a restart every one of them is there, and none twice.
 */
describeWithPostgres('kill -9 under load', () => {
  let db: TestDatabase;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await stopService(service);
    await db?.stop();
  });

  it('finds every acknowledged conversion after a restart, none twice', { timeout: 120_000 }, async () => {
    service = await startService(db.url);
    const merchant = await createMerchantOn(service.url);
    const first = service;
    const load = conversionLoad(() => first.url, merchant.key, merchant.slug, 12, `crash-${Date.now()}`);

    // Let the load run until enough writes are acknowledged, then kill the process mid-flight.
    await waitFor(() => load.result.acknowledged.length >= 300, 60_000, '300 acknowledged conversions');
    first.child.kill('SIGKILL');
    const exit = await first.exited;
    const figures = await load.stop();
    expect(exit.signal).toBe('SIGKILL');

    const acknowledged = new Set(figures.acknowledged);
    service = await startService(db.url);
    const counts = await conversionCounts(db.url, merchant.organizationId);

    const missing = figures.acknowledged.filter((id) => counts.get(id) !== 1);
    const duplicated = [...counts].filter(([, n]) => n > 1);
    const unknown = [...counts.keys()].filter((id) => !figures.sent.includes(id));
    console.info(
      `[crash] sent ${figures.sent.length}, acknowledged ${acknowledged.size}, found after restart ${counts.size} ` +
        `(acknowledged found ${acknowledged.size - missing.length}), statuses ${JSON.stringify(figures.statuses)}`,
    );
    expect(missing).toEqual([]);
    expect(duplicated).toEqual([]);
    expect(unknown).toEqual([]);
    expect(figures.malformedErrors).toEqual([]);
    expect(figures.statuses['500'] ?? 0).toBe(0);

    // A customer created by a first sale (click + new customer_id) without its conversion can
    // only come from a request cut by the kill, never from an acknowledged one. The conversions
    // service writes the customer and the conversion as separate statements (no transaction), so
    // such a customer can exist until the client retries; the retry below must heal it.
    const orphanQuery = `select c.customer_id from customers c
        where c.organization_id = $1
          and not exists (select 1 from conversions v where v.organization_id = c.organization_id and v.customer_id = c.customer_id)`;
    const orphans = await withDatabase(db.url, (client) =>
      client.query<{ customer_id: string }>(orphanQuery, [merchant.organizationId]),
    );
    for (const { customer_id } of orphans.rows) {
      expect(
        acknowledged.has(customer_id.replace(/-cus-(\d+)$/, '-$1')),
        `orphan customer ${customer_id} of an acknowledged conversion`,
      ).toBe(false);
    }

    // The restarted service answers for each acknowledged one, and a client retrying everything it
    // sent (acknowledged or not) ends with exactly one record per external_id.
    const sample = figures.acknowledged.filter((_, i) => i % 10 === 0);
    for (const id of sample) {
      const res = await call(service.url, 'GET', `/api/conversions/${encodeURIComponent(id)}`, { key: merchant.key });
      expect(res.status, id).toBe(200);
      expect(res.body.data.conversion.external_id).toBe(id);
    }
    let deduped = 0;
    const retry = [...figures.sent];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let id = retry.pop(); id !== undefined; id = retry.pop()) {
          const n = Number(id.slice(id.lastIndexOf('-') + 1));
          const body: Record<string, unknown> = { external_id: id, amount: 10 + (n % 90), ref: merchant.slug };
          if (n % 2 === 0) body.customer_id = id.replace(/-(\d+)$/, '-cus-$1');
          const res = await call(service!.url, 'POST', '/api/conversions', { key: merchant.key, body });
          expect([200, 201], JSON.stringify(res.body)).toContain(res.status);
          if (acknowledged.has(id)) expect(res.body.deduped, id).toBe(true);
          if (res.body.deduped) deduped++;
        }
      }),
    );
    const after = await conversionCounts(db.url, merchant.organizationId);
    expect(after.size).toBe(figures.sent.length);
    expect([...after.values()].every((n) => n === 1)).toBe(true);
    const orphansAfterRetry = await withDatabase(db.url, (client) =>
      client.query(orphanQuery, [merchant.organizationId]),
    );
    expect(orphansAfterRetry.rows).toEqual([]);
    console.info(
      `[crash] customers without their conversion right after the kill: ${orphans.rows.length} (all from unacknowledged requests); ` +
        `retried all ${figures.sent.length}: ${deduped} deduped, ${figures.sent.length - deduped} created; one row each, no orphan left`,
    );
  });
});

/**
 * The same on the embedded default (PGlite, data in DATA_DIR): what someone trying the service
 * with `npm start` gets. Needs no PostgreSQL, so it runs everywhere.
 */
describe('kill -9 under load on the embedded database', () => {
  let service: ServiceProcess | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'aa-embedded-crash-'));
  afterAll(async () => {
    await stopService(service);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finds every acknowledged conversion after a restart', { timeout: 180_000 }, async () => {
    // DATABASE_URL empty: the service falls back to its embedded PostgreSQL in DATA_DIR.
    const env = { DATA_DIR: dataDir };
    service = await startService('', env);
    const merchant = await createMerchantOn(service.url);
    const first = service;
    const load = conversionLoad(() => first.url, merchant.key, merchant.slug, 6, `embedded-${Date.now()}`);
    await waitFor(() => load.result.acknowledged.length >= 100, 120_000, '100 acknowledged conversions');
    first.child.kill('SIGKILL');
    await first.exited;
    const figures = await load.stop();

    service = await startService('', env);
    const restarted = service;
    const missing: string[] = [];
    for (const id of figures.acknowledged) {
      const res = await call(restarted.url, 'GET', `/api/conversions/${encodeURIComponent(id)}`, { key: merchant.key });
      if (res.status !== 200) missing.push(id);
    }
    const listed = await call(restarted.url, 'GET', '/api/conversions?limit=100', { key: merchant.key });
    const ids = listed.body.data.conversions.map((c: { external_id: string }) => c.external_id);
    expect(new Set(ids).size).toBe(ids.length);
    console.info(
      `[crash/embedded] sent ${figures.sent.length}, acknowledged ${figures.acknowledged.length}, missing after restart ${missing.length}`,
    );
    expect(missing).toEqual([]);
    expect(figures.statuses['500'] ?? 0).toBe(0);
  });
});
