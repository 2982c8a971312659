import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/api.js';
import { deliver, merchantWithSecret, snapshot, type Merchant } from './helpers.js';

// As copied from Polar's dashboard; Polar's SDK keys Standard Webhooks with base64(secret).
const SECRET = 'polar_whs_4Vq2x8RkT1mZp7Lc9Ns3Hd6Yw0Bf5Ja';

function signed(
  orgId: string,
  type: string,
  data: Record<string, unknown>,
  opts: { secret?: string; at?: Date; msgId?: string } = {},
) {
  const payload = JSON.stringify({ type, timestamp: new Date().toISOString(), data });
  const msgId = opts.msgId ?? `msg_${randomUUID()}`;
  const at = opts.at ?? new Date();
  const signer = new Webhook(Buffer.from(opts.secret ?? SECRET, 'utf8').toString('base64'));
  const signature = signer.sign(msgId, at, payload);
  const headers = {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
  return { payload, headers, send: () => deliver('polar', orgId, payload, headers) };
}

const send = (...args: Parameters<typeof signed>) => ({ res: signed(...args).send() });

function order(o: {
  id?: string;
  customerId: string;
  subscriptionId?: string | null;
  reason: string;
  net: number;
  tax?: number;
  ref?: string;
  status?: string;
  refunded?: number;
}) {
  return {
    id: o.id ?? randomUUID(),
    created_at: new Date(Date.now() - 5000).toISOString(),
    modified_at: null,
    status: o.status ?? 'paid',
    paid: true,
    subtotal_amount: o.net,
    discount_amount: 0,
    net_amount: o.net,
    tax_amount: o.tax ?? 0,
    total_amount: o.net + (o.tax ?? 0),
    refunded_amount: o.refunded ?? 0,
    refunded_tax_amount: 0,
    currency: 'usd',
    billing_reason: o.reason,
    customer_id: o.customerId,
    product_id: randomUUID(),
    subscription_id: o.subscriptionId ?? null,
    checkout_id: randomUUID(),
    metadata: o.ref ? { ref_svc_affiliate: o.ref } : {},
    customer: { id: o.customerId, email: 'buyer@example.com', external_id: 'user_42', metadata: {} },
  };
}

describe('Polar webhooks', () => {
  let m: Merchant;
  beforeAll(async () => {
    m = await merchantWithSecret('polar', SECRET);
  });

  it('runs the whole lifecycle with Standard Webhooks signatures; redelivering every event twice changes nothing', async () => {
    const customerId = randomUUID();
    const subscriptionId = randomUUID();
    const first = order({
      customerId,
      subscriptionId,
      reason: 'subscription_create',
      net: 2000,
      tax: 400,
      ref: m.slug,
    });
    const renewal = order({ customerId, subscriptionId, reason: 'subscription_cycle', net: 2000, tax: 400 });
    const deliveries = [
      signed(m.id, 'order.paid', first),
      signed(m.id, 'order.paid', renewal),
      signed(m.id, 'order.refunded', { ...renewal, status: 'partially_refunded', refunded_amount: 500 }),
      signed(m.id, 'subscription.canceled', {
        id: subscriptionId,
        status: 'canceled',
        customer_id: customerId,
        metadata: {},
        cancel_at_period_end: true,
      }),
    ];
    for (const d of deliveries) {
      const res = await d.send();
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.webhook.outcome).toBe('processed');
    }
    expect((await m.api.get(`/api/conversions/${first.id}`)).body.data.conversion).toMatchObject({
      kind: 'initial',
      amount: 20,
      currency: 'USD',
      commission_amount: 6,
      customer_id: customerId,
    });
    expect((await m.api.get(`/api/conversions/${renewal.id}`)).body.data.conversion).toMatchObject({
      kind: 'recurring',
      status: 'approved',
      refunded_amount: 5,
      commission_amount: 4.5,
    });
    expect((await m.api.get(`/api/customers/${customerId}`)).body.data.customer.status).toBe('canceled');

    const before = await snapshot(m, [customerId]);
    for (const d of deliveries) {
      for (let i = 0; i < 2; i++) {
        const res = await deliver('polar', m.id, d.payload, d.headers);
        expect(res.body.data.webhook.outcome).toBe('duplicate');
      }
    }
    expect(await snapshot(m, [customerId])).toEqual(before);

    // A full refund later (a new delivery) reverses the commission.
    const full = await send(m.id, 'order.refunded', { ...renewal, status: 'refunded', refunded_amount: 2000 }).res;
    expect(full.body.data.webhook.outcome).toBe('processed');
    expect((await m.api.get(`/api/conversions/${renewal.id}`)).body.data.conversion).toMatchObject({
      status: 'reversed',
      commission_amount: 0,
      refunded_amount: 20,
    });
  });

  it('a one-time purchase with a referral but no prior customer creates the customer and an initial conversion', async () => {
    const o = order({ customerId: randomUUID(), reason: 'purchase', net: 999, ref: m.slug });
    expect((await send(m.id, 'order.paid', o).res).body.data.webhook.outcome).toBe('processed');
    expect((await m.api.get(`/api/customers/${o.customer_id}`)).body.data.customer).toMatchObject({
      status: 'active',
      affiliate_id: m.affiliate.id,
    });
    expect((await m.api.get(`/api/conversions/${o.id}`)).body.data.conversion).toMatchObject({
      amount: 9.99,
      commission_amount: 3,
    });
  });

  it('an order without a referral records nothing', async () => {
    const before = await snapshot(m);
    const res = await send(m.id, 'order.paid', order({ customerId: randomUUID(), reason: 'purchase', net: 999 })).res;
    expect(res.status).toBe(200);
    expect(res.body.data.webhook.outcome).toBe('ignored');
    expect(await snapshot(m)).toEqual(before);
  });

  it('400 and nothing recorded for a wrong secret, a stale or future timestamp, missing headers', async () => {
    const before = await snapshot(m);
    const o = () => order({ customerId: randomUUID(), reason: 'purchase', net: 999, ref: m.slug });
    expectError(
      await send(m.id, 'order.paid', o(), { secret: 'polar_whs_not_the_right_one' }).res,
      400,
      /Invalid webhook-signature/,
    );
    expectError(
      await send(m.id, 'order.paid', o(), { at: new Date(Date.now() - 330_000) }).res,
      400,
      /Invalid webhook-signature/,
    );
    expectError(
      await send(m.id, 'order.paid', o(), { at: new Date(Date.now() + 330_000) }).res,
      400,
      /Invalid webhook-signature/,
    );
    // A valid signature, but over another body: refused.
    const good = signed(m.id, 'order.paid', o());
    expectError(
      await deliver('polar', m.id, good.payload.replace('"net_amount":999', '"net_amount":99900'), good.headers),
      400,
    );
    const payload = JSON.stringify({ type: 'order.paid', data: o() });
    expectError(await deliver('polar', m.id, payload, {}), 400, /Missing webhook-id/);
    expect(await snapshot(m)).toEqual(before);
  });

  it("400 for another organization's id in the path", async () => {
    const other = await merchantWithSecret('polar', 'polar_whs_other_organization_secret');
    expectError(
      await send(other.id, 'order.paid', order({ customerId: randomUUID(), reason: 'purchase', net: 999, ref: m.slug }))
        .res,
      400,
    );
    expect((await other.api.get('/api/conversions')).body.data.conversions).toEqual([]);
  });
});
