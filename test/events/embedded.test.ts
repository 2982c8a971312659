import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../server/src/db/embedded.js';
import { closeOrm, initOrm } from '../../server/src/db/orm.js';
import { EventDelivery } from '../../server/src/modules/events/delivery.js';
import { SecretBox } from '../../server/src/security/secret-box.js';
import { ADMIN, call, merchant } from './support/app.js';
import { Receiver, until } from './support/receiver.js';

/** The default setup (no DATABASE_URL): pg-boss shares the embedded database's one connection with the API. */
describe('outbound events on the embedded database', () => {
  let embedded: EmbeddedPostgres | undefined;
  let server: Server | undefined;
  let delivery: EventDelivery | undefined;
  let receiver: Receiver | undefined;
  let orm: Awaited<ReturnType<typeof initOrm>> | undefined;

  afterAll(async () => {
    await delivery?.stop();
    server?.closeAllConnections();
    server?.close();
    await receiver?.stop();
    if (orm) await closeOrm(orm, true);
    await embedded?.stop();
  });

  it('delivers, signed, over the single connection', { timeout: 120_000 }, async () => {
    embedded = await startEmbeddedPostgres();
    orm = await initOrm(embedded.url, 1);
    const { listener } = createApp({
      orm,
      config: {
        ADMIN_TOKEN: ADMIN,
        PUBLIC_BASE_URL: 'http://localhost:3000',
        API_KEY_CACHE_TTL_MS: 5_000,
        WEBHOOK_ALLOW_PRIVATE_URLS: true,
      },
    });
    server = await new Promise<Server>((resolve) => {
      const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
    });
    delivery = new EventDelivery(orm, new SecretBox(undefined), pino({ level: 'silent' }), { allowPrivateUrls: true });
    await delivery.start();
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    receiver = await new Receiver().start();
    const m = await merchant(base);
    const endpoint = await call(base, 'POST', '/api/webhook-endpoints', {
      key: m.key,
      body: { url: receiver.url, events: ['conversion.created'] },
    });
    receiver.secret = endpoint.body.data.secret;
    for (let i = 0; i < 20; i++)
      expect(
        (await m.api('POST', '/api/conversions', { external_id: `pglite-${i}`, amount: 10, ref: m.slug })).status,
      ).toBe(201);
    await until(() => receiver!.received.length >= 20, 60_000, '20 deliveries');
    expect(receiver.received.every((r) => r.verified === true)).toBe(true);
    expect(new Set(receiver.events().map((e) => e.data.conversion.external_id)).size).toBe(20);
  });
});
