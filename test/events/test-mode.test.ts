import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startEventsApp, type EventsApp } from './support/app.js';
import { Receiver, until } from './support/receiver.js';

/**
 * Outbound events in test mode (spec/test-mode.md): endpoints belong to the mode of the key that
 * created them, so a test conversion is delivered to the merchant's test endpoint only, with
 * `livemode: false`, and a live one to the live endpoint only, with `livemode: true`; a provider's
 * test event (Stripe `livemode: false`, even signed with the live secret) too. Real delivery, real
 * receivers verifying the signatures.
 */
describe('outbound events of test data', () => {
  let app: EventsApp;
  const liveReceiver = new Receiver();
  const testReceiver = new Receiver();

  beforeAll(async () => {
    app = await startEventsApp({ retryDelaysMs: [300], timeoutMs: 2_000, jitter: 0 });
    await liveReceiver.start();
    await testReceiver.start();
  }, 60_000);
  afterAll(async () => {
    await liveReceiver.stop();
    await testReceiver.stop();
    await app?.stop();
  });

  const conversionsIn = (receiver: Receiver) => receiver.events().filter((e) => e.type === 'conversion.created');
  const externalIds = (receiver: Receiver) =>
    conversionsIn(receiver).map((e) => e.data.conversion.external_id as string);

  it(
    'a test conversion reaches only the test endpoint (livemode false); a live one only the live endpoint (livemode true)',
    { timeout: 60_000 },
    async () => {
      const org = await call(app.baseUrl, 'POST', '/admin/organizations', {
        admin: true,
        body: { name: `Modes ${Date.now()}` },
      });
      expect(org.status).toBe(201);
      const liveId: string = org.body.data.organization.id;
      const keys = { live: org.body.data.api_key as string, test: org.body.data.test_api_key as string };
      const as = (mode: 'live' | 'test') => (method: string, path: string, body?: unknown) =>
        call(app.baseUrl, method, path, { key: keys[mode], body });
      const slug = `modes-${Math.random().toString(36).slice(2, 10)}`;
      for (const mode of ['live', 'test'] as const) {
        const program = await as(mode)('POST', '/api/programs', { name: 'Main', commission_value: 25 });
        expect(program.status).toBe(201);
        expect(
          (
            await as(mode)('POST', '/api/affiliates', {
              email: `${slug}@example.com`,
              program_id: program.body.data.program.id,
              slug,
            })
          ).status,
        ).toBe(201);
        const receiver = mode === 'live' ? liveReceiver : testReceiver;
        const endpoint = await as(mode)('POST', '/api/webhook-endpoints', {
          url: receiver.url,
          events: ['conversion.created', 'commission.created'],
        });
        expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
        receiver.secret = endpoint.body.data.secret;
      }
      // Each key lists its own endpoint only.
      for (const mode of ['live', 'test'] as const) {
        const listed = await as(mode)('GET', '/api/webhook-endpoints');
        expect(listed.body.data.webhook_endpoints.map((e: { url: string }) => e.url)).toEqual([
          mode === 'live' ? liveReceiver.url : testReceiver.url,
        ]);
      }

      const sale = async (mode: 'live' | 'test', externalId: string) => {
        const click = await as(mode)('POST', '/api/clicks', { ref: slug });
        expect(click.status).toBe(201);
        expect(
          (
            await as(mode)('POST', '/api/customers', {
              customer_id: `cus_${externalId}`,
              cookie_id: click.body.data.click.cookie_id,
            })
          ).status,
        ).toBe(201);
        expect(
          (
            await as(mode)('POST', '/api/conversions', {
              external_id: externalId,
              amount: 100,
              customer_id: `cus_${externalId}`,
            })
          ).status,
        ).toBe(201);
      };
      await sale('test', 'order_test_1');
      await sale('live', 'order_live_1');

      // A provider's test event, signed with the LIVE secret: test data, so the test endpoint.
      const secret = 'whsec_modes_5f1c0e1e0f6d4c1a9b2e7d3c8a4b';
      expect((await as('live')('PUT', '/api/integrations/stripe', { signing_secret: secret })).status).toBe(200);
      const invoice = {
        id: 'in_modes_1',
        object: 'invoice',
        status: 'paid',
        currency: 'usd',
        amount_paid: 5000,
        total: 5000,
        total_excluding_tax: 5000,
        customer: 'cus_stripe_modes',
        billing_reason: 'subscription_create',
        parent: {
          type: 'subscription_details',
          subscription_details: { metadata: { ref_svc_affiliate: slug }, subscription: 'sub_modes_1' },
        },
        created: Math.floor(Date.now() / 1000),
      };
      const body = JSON.stringify({
        id: 'evt_modes_1',
        object: 'event',
        type: 'invoice.paid',
        livemode: false,
        created: Math.floor(Date.now() / 1000),
        data: { object: invoice },
      });
      const delivered = await fetch(`${app.baseUrl}/webhooks/stripe/${liveId}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret }),
        },
        body,
      });
      expect(delivered.status).toBe(200);
      expect((await delivered.json()).data.webhook.outcome).toBe('processed');

      await until(
        () => externalIds(testReceiver).includes('order_test_1') && externalIds(testReceiver).includes('in_modes_1'),
        30_000,
        'the test conversions at the test endpoint',
      );
      await until(
        () => externalIds(liveReceiver).includes('order_live_1'),
        30_000,
        'the live conversion at the live endpoint',
      );
      // Delivered in the same passes as the others: a stray delivery would have arrived by now; give it a moment more.
      await new Promise((resolve) => setTimeout(resolve, 1_000));

      expect(externalIds(testReceiver).sort()).toEqual(['in_modes_1', 'order_test_1']);
      expect(externalIds(liveReceiver)).toEqual(['order_live_1']);
      // The envelope and the resource in it, as the API answers it in that mode.
      for (const event of testReceiver.events())
        expect(
          [event.livemode, Object.values(event.data as Record<string, { livemode: boolean }>)[0].livemode],
          event.type,
        ).toEqual([false, false]);
      for (const event of liveReceiver.events())
        expect(
          [event.livemode, Object.values(event.data as Record<string, { livemode: boolean }>)[0].livemode],
          event.type,
        ).toEqual([true, true]);
      const [testConversion] = conversionsIn(testReceiver).filter(
        (e) => e.data.conversion.external_id === 'order_test_1',
      );
      const read = await as('test')('GET', '/api/conversions/order_test_1');
      expect(testConversion.data.conversion).toEqual(read.body.data.conversion);
      expect(
        testReceiver
          .events()
          .map((e) => e.type)
          .sort(),
      ).toEqual(['commission.created', 'commission.created', 'conversion.created', 'conversion.created']);
      expect(
        liveReceiver
          .events()
          .map((e) => e.type)
          .sort(),
      ).toEqual(['commission.created', 'conversion.created']);
      expect([...testReceiver.received, ...liveReceiver.received].every((r) => r.verified === true)).toBe(true);
      expect(Object.keys(conversionsIn(testReceiver)[0]).sort()).toEqual(['data', 'livemode', 'timestamp', 'type']);

      // Each mode's delivery log shows its own deliveries only.
      for (const mode of ['live', 'test'] as const) {
        const [endpoint] = (await as(mode)('GET', '/api/webhook-endpoints')).body.data.webhook_endpoints;
        const log = await as(mode)('GET', `/api/webhook-endpoints/${endpoint.id}/deliveries`);
        expect(log.status).toBe(200);
        expect(log.body.data.deliveries).toHaveLength(mode === 'live' ? 2 : 4);
      }
    },
  );
});
