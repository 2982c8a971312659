import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver, until } from './support/receiver.js';
import { merchant, startEventsApp, type EventsApp } from './support/app.js';

/**
 * One hanging endpoint does not hold up another merchant's deliveries: it gets at most
 * `endpointConcurrency` attempts at once, the rest of its deliveries wait their turn without
 * holding the process's slots, and all are delivered once it answers again.
 */
describe('a hanging endpoint beside a healthy one', () => {
  let app: EventsApp;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    app = await startEventsApp({
      endpointConcurrency: 2,
      maxInFlight: 4,
      timeoutMs: 5_000,
      retryDelaysMs: [300, 300, 300],
      jitter: 0,
    });
  }, 60_000);
  afterAll(async () => {
    for (const r of receivers) await r.stop();
    await app?.stop();
  });

  it(
    'delivers to the healthy one at once, at most 2 attempts to the hanging one at a time, and all of them later',
    { timeout: 60_000 },
    async () => {
      const [slow, healthy] = [await new Receiver().start(), await new Receiver().start()];
      receivers.push(slow, healthy);
      const [a, b] = [await merchant(app.baseUrl), await merchant(app.baseUrl)];
      let hanging = true;
      slow.answer = () => (hanging ? 'hang' : 204);
      const endpoint = await a.api('POST', '/api/webhook-endpoints', { url: slow.url, events: ['conversion.created'] });
      healthy.secret = (
        await b.api('POST', '/api/webhook-endpoints', { url: healthy.url, events: ['conversion.created'] })
      ).body.data.secret;
      for (let i = 0; i < 10; i++)
        expect(
          (await a.api('POST', '/api/conversions', { external_id: `slow-${i}`, amount: 10, ref: a.slug })).status,
        ).toBe(201);
      await until(() => slow.received.length >= 2, 10_000, 'two attempts hanging');

      const sentAt = Date.now();
      expect(
        (await b.api('POST', '/api/conversions', { external_id: 'healthy-1', amount: 10, ref: b.slug })).status,
      ).toBe(201);
      await until(() => healthy.received.length >= 1, 10_000, "the healthy endpoint's event");
      // Well before the hanging attempts time out (5 s).
      expect(healthy.received[0].at - sentAt).toBeLessThan(1_500);
      expect(healthy.received[0].verified).toBe(true);
      expect(slow.received.length).toBeLessThanOrEqual(2);
      const log = (
        await a.api('GET', `/api/webhook-endpoints/${endpoint.body.data.webhook_endpoint.id}/deliveries?status=pending`)
      ).body.data.deliveries;
      expect(log).toHaveLength(10);

      hanging = false;
      const ids = () => new Set(slow.events().map((e) => e.data.conversion.external_id));
      await until(() => ids().size === 10, 30_000, 'every event of the slow endpoint, once it answers');
    },
  );
});
