import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Affiliate,
  Commission,
  Conversion,
  Customer,
  OUTBOUND_EVENT_TYPES,
  Payout,
} from '@affiliate-attribution/contract';
import { Receiver, until } from './support/receiver.js';
import { merchant, startEventsApp, type EventsApp } from './support/app.js';
import { StripeStandIn } from '../support/rails/stripe-standin.js';

const SCHEMAS = {
  affiliate: Affiliate,
  customer: Customer,
  conversion: Conversion,
  commission: Commission,
  payout: Payout,
} as const;

/** Every event of the catalogue, each written by the change it describes, with the REST API's resource. */
describe('the event catalogue', () => {
  let app: EventsApp;
  let receiver: Receiver;

  beforeAll(async () => {
    app = await startEventsApp({ retryDelaysMs: [300], timeoutMs: 2_000, jitter: 0 });
    receiver = await new Receiver().start();
  }, 60_000);
  afterAll(async () => {
    await receiver?.stop();
    await app?.stop();
  });

  it('sends each of the 12 events, signed, with the resource as the API returns it', { timeout: 60_000 }, async () => {
    const m = await merchant(app.baseUrl);
    const endpoint = await m.api('POST', '/api/webhook-endpoints', {
      url: receiver.url,
      events: [...OUTBOUND_EVENT_TYPES],
    });
    receiver.secret = endpoint.body.data.secret;

    const affiliate = await m.api('POST', '/api/affiliates', {
      email: 'jane@example.com',
      program_id: m.programId,
      slug: `jane-${Date.now()}`,
    });
    const affiliateId = affiliate.body.data.affiliate.id;
    await m.api('PATCH', `/api/affiliates/${affiliateId}`, { name: 'Jane' });
    const click = await m.api('POST', '/api/clicks', { ref: affiliate.body.data.affiliate.slug });
    const customer = await m.api('POST', '/api/customers', {
      customer_id: 'cus_1',
      cookie_id: click.body.data.click.cookie_id,
    });
    expect(customer.status).toBe(201);
    const conversion = await m.api('POST', '/api/conversions', {
      external_id: 'order_1',
      amount: 100,
      customer_id: 'cus_1',
    });
    expect(conversion.status).toBe(201);
    await m.api('POST', '/api/conversions/order_1/refund', { amount: 40 });
    await m.api('PATCH', '/api/customers/cus_1', { status: 'canceled' });
    const bonus = await m.api('POST', '/api/commissions', {
      affiliate_id: affiliateId,
      amount: 50,
      description: 'bonus',
    });
    const sale = (await m.api('GET', `/api/commissions?type=sale&affiliate_id=${affiliateId}`)).body.data
      .commissions[0];
    await m.api('POST', `/api/commissions/${sale.id}/approve`, {});
    const payouts = await m.api('POST', '/api/payouts', {});
    expect(payouts.body.data.payouts).toHaveLength(1);
    await m.api('POST', `/api/payouts/${payouts.body.data.payouts[0].id}/paid`, { reference: 'PP-1' });
    const bonus2 = await m.api('POST', '/api/commissions', {
      affiliate_id: affiliateId,
      amount: 20,
      description: 'another bonus',
    });
    const second = await m.api('POST', '/api/payouts', {});
    await m.api('POST', `/api/payouts/${second.body.data.payouts[0].id}/cancel`, {});
    expect(bonus.status).toBe(201);
    // payout.failed: a payout sent through Stripe Connect to an account Stripe does not know (a local Stripe, test/support/rails).
    const stripe = await new StripeStandIn().start();
    process.env.STRIPE_API_BASE_URL = stripe.baseUrl;
    try {
      expect(
        (
          await m.api('PATCH', `/api/affiliates/${affiliateId}`, {
            payout_method: 'stripe',
            stripe_account_id: 'acct_unknown',
          })
        ).status,
      ).toBe(200);
      expect((await m.api('PUT', '/api/integrations/stripe_connect', { secret_key: stripe.secretKey })).status).toBe(
        200,
      );
      const third = await m.api('POST', '/api/payouts', {});
      expect((await m.api('POST', '/api/payouts/send', { payout_ids: [third.body.data.payouts[0].id] })).status).toBe(
        202,
      );
      await until(
        async () =>
          (await m.api('GET', `/api/payouts/${third.body.data.payouts[0].id}`)).body.data.payout.status === 'failed',
        10_000,
        'the payout failed',
      );
    } finally {
      delete process.env.STRIPE_API_BASE_URL;
      await stripe.stop();
    }

    await until(
      () => OUTBOUND_EVENT_TYPES.every((t) => receiver.events().some((e) => e.type === t)),
      30_000,
      'every event type',
    );
    expect(receiver.received.every((r) => r.verified === true)).toBe(true);
    const examples: Record<string, unknown> = {};
    for (const event of receiver.events()) {
      expect(Object.keys(event).sort()).toEqual(['data', 'livemode', 'timestamp', 'type']);
      // A live key's data: live events (spec/test-mode.md; test/events/test-mode.test.ts has the test side).
      expect(event.livemode).toBe(true);
      const key = event.type.split('.')[0] as keyof typeof SCHEMAS;
      expect(Object.keys(event.data)).toEqual([key]);
      expect(() => SCHEMAS[key].strict().parse(event.data[key]), event.type).not.toThrow();
      examples[event.type] ??= event;
    }
    const of = (type: string) => receiver.events().filter((e) => e.type === type);
    expect(of('affiliate.updated').at(-1).data.affiliate.name).toBe('Jane');
    expect(of('conversion.refunded')[0].data.conversion).toMatchObject({ external_id: 'order_1', refunded_amount: 40 });
    expect(of('customer.updated').map((e) => e.data.customer.status)).toContain('canceled');
    expect(of('payout.paid')[0].data.payout).toMatchObject({ status: 'paid', reference: 'PP-1' });
    expect(of('payout.canceled')[0].data.payout.status).toBe('canceled');
    expect(of('payout.failed')[0].data.payout).toMatchObject({
      status: 'failed',
      method: 'stripe',
      failure_reason: "Stripe refused the transfer (400): No such destination: 'acct_unknown'",
    });
    // An entry taken into a payout, then paid; another taken, then released (order is not promised).
    const entryEvents = (id: string) =>
      of('commission.updated')
        .filter((e) => e.data.commission.id === id)
        .map((e) => [e.data.commission.status, e.data.commission.payout_id]);
    const [firstId, secondId] = [payouts.body.data.payouts[0].id, second.body.data.payouts[0].id];
    await until(
      () => entryEvents(bonus2.body.data.commission.id).length >= 2,
      30_000,
      'the second bonus taken and released',
    );
    expect(entryEvents(bonus.body.data.commission.id)).toEqual(
      expect.arrayContaining([
        ['approved', firstId],
        ['paid', firstId],
      ]),
    );
    expect(entryEvents(bonus2.body.data.commission.id)).toEqual(
      expect.arrayContaining([
        ['approved', secondId],
        ['approved', null],
      ]),
    );
    // The last event of a resource is what the API answers now.
    const refunded = (await m.api('GET', '/api/conversions/order_1')).body.data.conversion;
    expect(of('conversion.refunded').at(-1).data.conversion).toEqual(refunded);
    if (process.env.EVENT_EXAMPLES) writeFileSync(process.env.EVENT_EXAMPLES, JSON.stringify(examples, null, 2));
  });
});
