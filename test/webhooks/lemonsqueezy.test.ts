import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/api.js';
import { deliver, merchantWithSecret, snapshot, type Merchant } from './helpers.js';

const SECRET = 'ls-signing-secret-8f2d1c7b';
let next = Math.floor(Math.random() * 1e6) * 100;
const id = () => String(++next);

function signed(
  orgId: string,
  eventName: string,
  data: Record<string, unknown>,
  customData: Record<string, string> | null,
  secret = SECRET,
) {
  const body = JSON.stringify({
    meta: {
      test_mode: false,
      event_name: eventName,
      webhook_id: 'c2a8f0b1-5d3e-4f2a-9b7c-1e6d8a4f3b2c',
      ...(customData ? { custom_data: customData } : {}),
    },
    data,
  });
  const signature = createHmac('sha256', secret).update(body).digest('hex');
  const headers = { 'x-signature': signature, 'x-event-name': eventName };
  return { body, headers, send: () => deliver('lemonsqueezy', orgId, body, headers) };
}

const order = (o: { customer: string; total: number; tax: number; status?: string; refunded?: number }) => ({
  type: 'orders',
  id: id(),
  attributes: {
    store_id: 1,
    customer_id: Number(o.customer),
    identifier: '104e18a2-d755-4d4b-80c4-a6c1dcbe1c10',
    order_number: 1,
    user_name: 'Buyer',
    user_email: 'buyer@example.com',
    currency: 'USD',
    currency_rate: '1.0000',
    subtotal: o.total - o.tax,
    discount_total: 0,
    tax: o.tax,
    total: o.total,
    status: o.status ?? 'paid',
    refunded: (o.refunded ?? 0) > 0,
    refunded_amount: o.refunded ?? 0,
    refunded_at: null,
    created_at: new Date(Date.now() - 5000).toISOString(),
    updated_at: new Date().toISOString(),
  },
});

const invoice = (o: { customer: string; subscription: string; total: number; reason: string }) => ({
  type: 'subscription-invoices',
  id: id(),
  attributes: {
    store_id: 1,
    subscription_id: Number(o.subscription),
    customer_id: Number(o.customer),
    user_email: 'buyer@example.com',
    billing_reason: o.reason,
    currency: 'USD',
    status: 'paid',
    subtotal: o.total,
    tax: 0,
    total: o.total,
    refunded: false,
    refunded_amount: 0,
    created_at: new Date(Date.now() - 5000).toISOString(),
  },
});

describe('Lemon Squeezy webhooks', () => {
  let m: Merchant;
  beforeAll(async () => {
    m = await merchantWithSecret('lemonsqueezy', SECRET);
  });

  it('runs the whole lifecycle (order_created -> subscription_payment_success -> order_refunded -> subscription_cancelled); redelivery changes nothing', async () => {
    const customer = id();
    const subscription = id();
    const first = order({ customer, total: 1200, tax: 200 });
    const firstInvoice = invoice({ customer, subscription, total: 1200, reason: 'initial' });
    const renewal = invoice({ customer, subscription, total: 1000, reason: 'renewal' });
    const custom = { ref_svc_affiliate: m.slug };
    const deliveries = [
      signed(m.id, 'order_created', first, custom),
      // The subscription's first invoice is the same charge as order_created.
      signed(m.id, 'subscription_payment_success', firstInvoice, custom),
      signed(m.id, 'subscription_payment_success', renewal, custom),
      signed(
        m.id,
        'order_refunded',
        { ...first, attributes: { ...first.attributes, status: 'refunded', refunded: true, refunded_amount: 1200 } },
        custom,
      ),
      signed(
        m.id,
        'subscription_cancelled',
        {
          type: 'subscriptions',
          id: subscription,
          attributes: {
            customer_id: Number(customer),
            order_id: Number(first.id),
            status: 'cancelled',
            cancelled: true,
          },
        },
        custom,
      ),
    ];
    const outcomes = [];
    for (const d of deliveries) {
      const res = await d.send();
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      outcomes.push(res.body.data.webhook.outcome);
    }
    expect(outcomes).toEqual(['processed', 'ignored', 'processed', 'processed', 'processed']);
    const conversions = (await m.api.get(`/api/conversions?customer_id=${customer}`)).body.data.conversions;
    expect(conversions).toHaveLength(2);
    expect((await m.api.get(`/api/conversions/lemonsqueezy:order:${first.id}`)).body.data.conversion).toMatchObject({
      kind: 'initial',
      amount: 10,
      status: 'reversed',
      commission_amount: 0,
      refunded_amount: 10,
    });
    expect(
      (await m.api.get(`/api/conversions/lemonsqueezy:subscription-invoice:${renewal.id}`)).body.data.conversion,
    ).toMatchObject({
      kind: 'recurring',
      amount: 10,
      commission_amount: 3,
      status: 'approved',
    });
    expect((await m.api.get(`/api/customers/${customer}`)).body.data.customer.status).toBe('canceled');

    const before = await snapshot(m, [customer]);
    for (const d of deliveries)
      for (let i = 0; i < 2; i++) expect((await d.send()).body.data.webhook.outcome).toBe('duplicate');
    expect(await snapshot(m, [customer])).toEqual(before);
  });

  it('an order without custom data records nothing', async () => {
    const before = await snapshot(m);
    const res = await signed(m.id, 'order_created', order({ customer: id(), total: 500, tax: 0 }), null).send();
    expect(res.body.data.webhook.outcome).toBe('ignored');
    expect(await snapshot(m)).toEqual(before);
  });

  it('400 and nothing recorded for a forged, missing or mismatching signature', async () => {
    const before = await snapshot(m);
    const o = () => order({ customer: id(), total: 500, tax: 0 });
    expectError(
      await signed(m.id, 'order_created', o(), { ref_svc_affiliate: m.slug }, 'not-the-secret').send(),
      400,
      /Invalid X-Signature/,
    );
    const good = signed(m.id, 'order_created', o(), { ref_svc_affiliate: m.slug });
    expectError(
      await deliver('lemonsqueezy', m.id, good.body.replace('"total":500', '"total":50000'), good.headers),
      400,
    );
    expectError(await deliver('lemonsqueezy', m.id, good.body, { 'x-signature': 'zz' }), 400);
    expectError(await deliver('lemonsqueezy', m.id, good.body, {}), 400, 'Missing X-Signature header');
    expect(await snapshot(m)).toEqual(before);
  });

  it("400 for another organization's id in the path", async () => {
    const other = await merchantWithSecret('lemonsqueezy', 'other-organization-secret');
    expectError(
      await signed(other.id, 'order_created', order({ customer: id(), total: 500, tax: 0 }), {
        ref_svc_affiliate: m.slug,
      }).send(),
      400,
    );
  });
});
