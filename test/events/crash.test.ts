import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  call,
  conversionLoad,
  createMerchantOn,
  describeWithPostgres,
  startService,
  stopService,
  waitFor,
  withDatabase,
  type ServiceProcess,
} from '../reliability/support/service.js';
import { Receiver } from './support/receiver.js';

/**
 * kill -9 of the service under a conversion load with an endpoint subscribed: every acknowledged
 * conversion was committed with its outbox row, so after a restart its conversion.created reaches
 * the receiver at least once, and no event names a conversion that does not exist.
 */
describeWithPostgres('outbound events across kill -9', () => {
  let db: TestDatabase;
  let service: ServiceProcess | undefined;
  let receiver: Receiver;
  const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ENCRYPTION_KEY: 'b'.repeat(64) };

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await stopService(service);
    await receiver?.stop();
    await db?.stop();
  });

  it(
    'delivers conversion.created for every acknowledged conversion, none for one that does not exist',
    { timeout: 180_000 },
    async () => {
      service = await startService(db.url, env);
      const merchant = await createMerchantOn(service.url);
      const endpoint = await call(service.url, 'POST', '/api/webhook-endpoints', {
        key: merchant.key,
        body: { url: receiver.url, events: ['conversion.created'] },
      });
      expect(endpoint.status).toBe(201);
      receiver.secret = endpoint.body.data.secret;

      const first = service;
      const load = conversionLoad(() => first.url, merchant.key, merchant.slug, 12, `evcrash-${Date.now()}`);
      await waitFor(() => load.result.acknowledged.length >= 300, 60_000, '300 acknowledged conversions');
      first.child.kill('SIGKILL');
      await first.exited;
      const figures = await load.stop();
      const receivedBeforeRestart = receiver.received.length;

      service = await startService(db.url, env);
      const deliveredIds = () => new Set(receiver.events().map((e) => e.data.conversion.external_id as string));
      await waitFor(
        () => figures.acknowledged.every((id) => deliveredIds().has(id)),
        120_000,
        'conversion.created of every acknowledged conversion',
      );

      const stored = await withDatabase(db.url, (client) =>
        client.query<{ external_id: string }>('select external_id from conversions where organization_id = $1', [
          merchant.organizationId,
        ]),
      );
      const existing = new Set(stored.rows.map((r) => r.external_id));
      const delivered = deliveredIds();
      const phantom = [...delivered].filter((id) => !existing.has(id));
      const missing = figures.acknowledged.filter((id) => !delivered.has(id));
      const notVerified = receiver.received.filter((r) => r.verified !== true);
      const duplicates = receiver.received.length - new Set(receiver.received.map((r) => r.headers['webhook-id'])).size;
      console.info(
        `[events/crash] sent ${figures.sent.length}, acknowledged ${figures.acknowledged.length}, stored ${existing.size}; ` +
          `received ${receiver.received.length} (${receivedBeforeRestart} before the restart, ${duplicates} repeats of a webhook-id), ` +
          `distinct conversions ${delivered.size}`,
      );
      expect(missing).toEqual([]);
      expect(phantom).toEqual([]);
      expect(notVerified).toEqual([]);
      // Every stored conversion (acknowledged or not) gets its event too: the outbox row is in its statement.
      await waitFor(
        () => [...existing].every((id) => deliveredIds().has(id)),
        60_000,
        'an event for every stored conversion',
      );
    },
  );
});
