import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replicaPairUnavailable, startReplicaPair, type ReplicaPair } from './support/replica-pair.js';
import { call, createMerchantOn, describeWithPostgres, startService, stopService, waitFor, withDatabase, type ServiceProcess } from './support/service.js';

/**
 * DATABASE_REPLICA_URLS against a real streaming replica (pg_basebackup of a primary the test
 * builds on its own ports). With the replica's WAL replay paused, lists answer from the replica,
 * stale by design, while everything a write depends on stays right: recording conversions, their
 * idempotent repeats, refunds, renewals by customer, reads by id.
 */
const unavailable = replicaPairUnavailable();
// A laptop without the PostgreSQL server binaries (or not root) skips it; in CI a missing tool fails the run.
const describeReplicas = unavailable && !process.env.CI ? describe.skip : describeWithPostgres;

describeReplicas('read replicas (DATABASE_REPLICA_URLS)', () => {
  let pair: ReplicaPair | undefined;
  let service: ServiceProcess | undefined;
  let merchant: Awaited<ReturnType<typeof createMerchantOn>>;

  beforeAll(async () => {
    if (unavailable) throw new Error(`read-replica test: ${unavailable}`);
    pair = await startReplicaPair();
    service = await startService(pair.primaryUrl, { DATABASE_REPLICA_URLS: pair.replicaUrl });
    merchant = await createMerchantOn(service.url);
  }, 120_000);
  afterAll(async () => {
    await stopService(service);
    pair?.stop();
  });

  const api = (method: string, path: string, body?: unknown) => call(service!.url, method, path, { key: merchant.key, body });
  const listed = async (path: string, key: string) => ((await api('GET', path)).body.data[key] as { external_id?: string; conversion_id?: string }[]) ?? [];
  const replay = (what: 'pause' | 'resume') => withDatabase(pair!.replicaUrl, (client) => client.query(`select pg_wal_replay_${what}()`));

  it('lists read the replica (stale while its replay is paused); writes, repeats, refunds and reads by id stay right on the primary', { timeout: 60_000 }, async () => {
    const first = await api('POST', '/api/conversions', { external_id: 'inv-1', amount: 100, ref: merchant.slug });
    expect(first.status).toBe(201);
    await waitFor(async () => (await listed('/api/conversions', 'conversions')).some((c) => c.external_id === 'inv-1'), 10_000, 'the replica to show inv-1');
    expect((await api('POST', '/api/customers', { customer_id: 'cus_1', ref: merchant.slug })).status).toBe(201);

    await replay('pause');
    try {
      const second = await api('POST', '/api/conversions', { external_id: 'inv-2', amount: 50, ref: merchant.slug });
      expect(second.status).toBe(201);
      // The idempotent repeat is decided on the primary: the same conversion, deduped.
      const repeat = await api('POST', '/api/conversions', { external_id: 'inv-2', amount: 50, ref: merchant.slug });
      expect(repeat.status).toBe(200);
      expect(repeat.body).toMatchObject({ deduped: true, data: { conversion: { id: second.body.data.conversion.id } } });
      // A read by id, and a refund of the conversion the replica does not have yet.
      expect((await api('GET', '/api/conversions/inv-2')).status).toBe(200);
      const refund = await api('POST', '/api/conversions/inv-2/refund', { amount: 20 });
      expect(refund.status).toBe(200);
      expect(refund.body.data.conversion).toMatchObject({ refunded_amount: 20, commission_amount: 7.5 }); // 25 % of the 30 kept
      // A customer created before the pause converts, and renews, by customer_id alone.
      expect((await api('POST', '/api/conversions', { external_id: 'inv-3', amount: 10, customer_id: 'cus_1' })).status).toBe(201);
      const renewal = await api('POST', '/api/conversions', { external_id: 'inv-4', amount: 10, customer_id: 'cus_1' });
      expect(renewal.body.data.conversion.kind).toBe('recurring');

      // Stale by design: the lists come from the paused replica.
      const conversions = await listed('/api/conversions', 'conversions');
      expect(conversions.map((c) => c.external_id)).toEqual(['inv-1']);
      const entries = await listed('/api/commissions', 'commissions');
      expect(entries).toHaveLength(1);
      expect(entries[0]!.conversion_id).toBe(first.body.data.conversion.id);
    } finally {
      await replay('resume');
    }
    await waitFor(async () => (await listed('/api/conversions', 'conversions')).length === 4, 10_000, 'the replica to catch up');
    const entries = await listed('/api/commissions', 'commissions');
    expect(entries).toHaveLength(4);
  });
});
