import Stripe from 'stripe';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, expectError } from '../support/api.js';
import { deliver, merchantWithSecret, nowSeconds, snapshot, type Merchant } from './helpers.js';

const SECRET = 'whsec_test_5f1c0e1e0f6d4c1a9b2e7d3c8a4b6e2f';

let seq = 0;
const uid = (prefix: string) =>
  `${prefix}_${Date.now().toString(36)}${(++seq).toString(36)}${Math.random().toString(36).slice(2, 8)}`;

function stripeEvent(type: string, object: Record<string, unknown>, id = uid('evt')) {
  return JSON.stringify({
    id,
    object: 'event',
    api_version: '2025-03-31.basil',
    created: nowSeconds(),
    data: { object },
    livemode: true, // live data: a test-mode event (livemode false) lands in the test organization (test-mode.test.ts)
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  });
}

function send(orgId: string, payload: string, opts: { secret?: string; timestamp?: number } = {}) {
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: opts.secret ?? SECRET,
    timestamp: opts.timestamp,
  });
  return deliver('stripe', orgId, payload, { 'stripe-signature': signature });
}

function subscriptionCheckout(o: {
  customer: string;
  invoice: string;
  subscription: string;
  amount: number;
  tax?: number;
  ref?: string;
}) {
  return {
    id: uid('cs_test'),
    object: 'checkout.session',
    mode: 'subscription',
    status: 'complete',
    payment_status: 'paid',
    amount_subtotal: o.amount,
    amount_total: o.amount + (o.tax ?? 0),
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: o.tax ?? 0 },
    currency: 'usd',
    customer: o.customer,
    customer_details: { email: 'buyer@example.com', name: 'Buyer' },
    invoice: o.invoice,
    subscription: o.subscription,
    payment_intent: null,
    metadata: o.ref ? { ref_svc_affiliate: o.ref } : {},
    created: nowSeconds() - 5,
  };
}

function invoice(o: {
  id: string;
  customer: string;
  subscription: string;
  amount: number;
  reason: string;
  ref?: string;
  tax?: number;
}) {
  return {
    id: o.id,
    object: 'invoice',
    billing_reason: o.reason,
    amount_due: o.amount,
    amount_paid: o.amount,
    amount_remaining: 0,
    currency: 'usd',
    customer: o.customer,
    customer_email: 'buyer@example.com',
    status: 'paid',
    total: o.amount,
    total_taxes: o.tax ? [{ amount: o.tax, tax_behavior: 'exclusive', taxability_reason: 'standard_rated' }] : [],
    metadata: {},
    parent: {
      type: 'subscription_details',
      quote_details: null,
      subscription_details: { metadata: o.ref ? { ref_svc_affiliate: o.ref } : {}, subscription: o.subscription },
    },
    status_transitions: { finalized_at: nowSeconds() - 10, paid_at: nowSeconds() - 5 },
    created: nowSeconds() - 10,
  };
}

describe('Stripe webhooks', () => {
  let m: Merchant;
  beforeAll(async () => {
    m = await merchantWithSecret('stripe', SECRET);
  });

  it('runs the whole lifecycle: checkout -> renewal -> refund -> cancel, each event redelivered twice changing nothing', async () => {
    const customer = uid('cus');
    const subscription = uid('sub');
    const firstInvoice = uid('in');
    const secondInvoice = uid('in');
    const secondPayment = uid('pi');
    const events = [
      stripeEvent(
        'checkout.session.completed',
        subscriptionCheckout({ customer, invoice: firstInvoice, subscription, amount: 4999, ref: m.slug }),
      ),
      // The first invoice of the same subscription: the same charge, announced again.
      stripeEvent(
        'invoice.paid',
        invoice({ id: firstInvoice, customer, subscription, amount: 4999, reason: 'subscription_create', ref: m.slug }),
      ),
      stripeEvent(
        'invoice.paid',
        invoice({ id: secondInvoice, customer, subscription, amount: 4999, reason: 'subscription_cycle' }),
      ),
      stripeEvent('invoice_payment.paid', {
        id: uid('inpay'),
        object: 'invoice_payment',
        invoice: secondInvoice,
        amount_paid: 4999,
        currency: 'usd',
        status: 'paid',
        payment: { type: 'payment_intent', payment_intent: secondPayment },
      }),
      stripeEvent('charge.refunded', {
        id: uid('ch'),
        object: 'charge',
        amount: 4999,
        amount_captured: 4999,
        amount_refunded: 4999,
        captured: true,
        currency: 'usd',
        customer,
        payment_intent: secondPayment,
        refunded: true,
        status: 'succeeded',
        metadata: {},
      }),
      stripeEvent('customer.subscription.deleted', {
        id: subscription,
        object: 'subscription',
        customer,
        status: 'canceled',
        metadata: {},
      }),
    ];

    const outcomes = [];
    for (const e of events) {
      const res = await send(m.id, e);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      outcomes.push(res.body.data.webhook.outcome);
    }
    expect(outcomes).toEqual(['processed', 'ignored', 'processed', 'processed', 'processed', 'processed']);

    const first = await m.api.get(`/api/conversions/${firstInvoice}`);
    expect(first.body.data.conversion).toMatchObject({
      external_id: firstInvoice,
      amount: 49.99,
      currency: 'USD',
      kind: 'initial',
      commission_amount: 15,
      customer_id: customer,
      affiliate_id: m.affiliate.id,
      status: 'approved',
      refunded_amount: 0,
    });
    const second = await m.api.get(`/api/conversions/${secondInvoice}`);
    expect(second.body.data.conversion).toMatchObject({
      kind: 'recurring',
      amount: 49.99,
      status: 'reversed',
      commission_amount: 0,
      refunded_amount: 49.99,
    });
    expect(second.body.data.conversion.reversed_at).toEqual(expect.any(String));
    const cust = await m.api.get(`/api/customers/${customer}`);
    expect(cust.body.data.customer).toMatchObject({ status: 'canceled', affiliate_id: m.affiliate.id });

    // The ledger: one sale entry per conversion that earned, held 30 days; the fully refunded one reversed.
    const entries = (await m.api.get(`/api/commissions?affiliate_id=${m.affiliate.id}&type=sale&limit=100`)).body.data
      .commissions;
    const entryOf = (conversionId: string) =>
      entries.filter((e: { conversion_id: string }) => e.conversion_id === conversionId);
    expect(entryOf(first.body.data.conversion.id)).toEqual([
      expect.objectContaining({ status: 'pending', amount: 15, currency: 'USD', customer_id: customer }),
    ]);
    expect(entryOf(second.body.data.conversion.id)).toEqual([
      expect.objectContaining({ status: 'reversed', amount: 15 }),
    ]);

    const before = await snapshot(m, [customer]);
    expect(before.totals).toEqual({ count: 2, amount: 99.98, commission: 15, refunded: 49.99 });
    for (const e of events) {
      for (let i = 0; i < 2; i++) {
        const res = await send(m.id, e);
        expect(res.status).toBe(200);
        expect(res.body.data.webhook.outcome).toBe('duplicate');
      }
    }
    expect(await snapshot(m, [customer])).toEqual(before);
  });

  it('counts a subscription charge once when invoice.paid arrives before checkout.session.completed', async () => {
    const customer = uid('cus');
    const subscription = uid('sub');
    const inv = uid('in');
    const a = await send(
      m.id,
      stripeEvent(
        'invoice.paid',
        invoice({ id: inv, customer, subscription, amount: 2000, reason: 'subscription_create', ref: m.slug }),
      ),
    );
    expect(a.body.data.webhook.outcome).toBe('processed');
    const b = await send(
      m.id,
      stripeEvent(
        'checkout.session.completed',
        subscriptionCheckout({ customer, invoice: inv, subscription, amount: 2000, ref: m.slug }),
      ),
    );
    expect(b.status).toBe(200);
    expect(b.body.data.webhook.outcome).toBe('ignored');
    const list = await m.api.get(`/api/conversions?customer_id=${customer}`);
    expect(list.body.data.conversions).toHaveLength(1);
    expect(list.body.data.conversions[0]).toMatchObject({
      external_id: inv,
      kind: 'initial',
      amount: 20,
      commission_amount: 6,
    });
  });

  it('one-off payment checkout: amount excludes tax, a partial refund reduces the commission in proportion', async () => {
    const pi = uid('pi');
    const session = {
      ...subscriptionCheckout({
        customer: uid('cus'),
        invoice: '',
        subscription: '',
        amount: 10000,
        tax: 1900,
        ref: m.slug,
      }),
      mode: 'payment',
      invoice: null,
      subscription: null,
      payment_intent: pi,
    };
    const res = await send(m.id, stripeEvent('checkout.session.completed', session));
    expect(res.body.data.webhook.outcome).toBe('processed');
    expect((await m.api.get(`/api/conversions/${pi}`)).body.data.conversion).toMatchObject({
      amount: 100,
      commission_amount: 30,
      kind: 'initial',
    });

    const charge = {
      id: uid('ch'),
      object: 'charge',
      amount: 11900,
      amount_refunded: 2975,
      currency: 'usd',
      payment_intent: pi,
      refunded: false,
      metadata: {},
    };
    expect((await send(m.id, stripeEvent('charge.refunded', charge))).body.data.webhook.outcome).toBe('processed');
    let c = (await m.api.get(`/api/conversions/${pi}`)).body.data.conversion;
    expect(c).toMatchObject({ status: 'approved', refunded_amount: 25, commission_amount: 22.5 });

    // A second partial refund: Stripe reports the charge's cumulative amount_refunded.
    await send(m.id, stripeEvent('charge.refunded', { ...charge, amount_refunded: 11900, refunded: true }));
    c = (await m.api.get(`/api/conversions/${pi}`)).body.data.conversion;
    expect(c).toMatchObject({ status: 'reversed', refunded_amount: 100, commission_amount: 0 });
  });

  it('one refund reported by the API and by Stripe counts once (issue 13: it was counted twice)', async () => {
    const pi = uid('pi');
    const session = {
      ...subscriptionCheckout({ customer: uid('cus'), invoice: '', subscription: '', amount: 10000, ref: m.slug }),
      mode: 'payment',
      invoice: null,
      subscription: null,
      payment_intent: pi,
    };
    await send(m.id, stripeEvent('checkout.session.completed', session));
    // The merchant records the refund through the API (the running total, no refund_id)…
    const api = await m.api.post(`/api/conversions/${pi}/refund`, { amount: 40 });
    expect(api.body.data.conversion).toMatchObject({ refunded_amount: 40, commission_amount: 18 });
    // …and Stripe reports the same refund: still 40 refunded, commission 18 (before: 80 and 6).
    const charge = {
      id: uid('ch'),
      object: 'charge',
      amount: 10000,
      amount_refunded: 4000,
      currency: 'usd',
      payment_intent: pi,
      refunded: false,
      metadata: {},
    };
    const event = await send(m.id, stripeEvent('charge.refunded', charge));
    expect(event.body.data.webhook.outcome).toBe('ignored');
    expect((await m.api.get(`/api/conversions/${pi}`)).body.data.conversion).toMatchObject({
      refunded_amount: 40,
      commission_amount: 18,
      status: 'approved',
    });
    // The merchant names the refund by its Stripe id afterwards: still the same 40.
    const named = await m.api.post(`/api/conversions/${pi}/refund`, { amount: 40, refund_id: 're_named' });
    expect(named.body).toMatchObject({
      deduped: true,
      data: { conversion: { refunded_amount: 40, commission_amount: 18 } },
    });
    // A second refund, reported by Stripe's running total: 70 in all.
    await send(m.id, stripeEvent('charge.refunded', { ...charge, amount_refunded: 7000 }));
    expect((await m.api.get(`/api/conversions/${pi}`)).body.data.conversion).toMatchObject({
      refunded_amount: 70,
      commission_amount: 9,
    });
  });

  it('a partial refund of a tax-inclusive charge is stored in whole cents, as the API would (issue 13: it stored 8.403361)', async () => {
    const pi = uid('pi');
    const session = {
      ...subscriptionCheckout({
        customer: uid('cus'),
        invoice: '',
        subscription: '',
        amount: 1000,
        tax: 190,
        ref: m.slug,
      }),
      mode: 'payment',
      invoice: null,
      subscription: null,
      payment_intent: pi,
    };
    await send(m.id, stripeEvent('checkout.session.completed', session));
    const charge = {
      id: uid('ch'),
      object: 'charge',
      amount: 1190,
      amount_refunded: 1000,
      currency: 'usd',
      payment_intent: pi,
      refunded: false,
      metadata: {},
    };
    await send(m.id, stripeEvent('charge.refunded', charge));
    // 10.00 x 1000 / 1190 = 8.403361…: 8.40, and the commission on what was kept (1.60 of 10.00: 30 % of 3.00 -> 0.48).
    expect((await m.api.get(`/api/conversions/${pi}`)).body.data.conversion).toMatchObject({
      amount: 10,
      refunded_amount: 8.4,
      commission_amount: 0.48,
    });
  });

  it('converts zero-decimal currencies exactly (JPY)', async () => {
    const pi = uid('pi');
    const session = {
      ...subscriptionCheckout({ customer: uid('cus'), invoice: '', subscription: '', amount: 5000, ref: m.slug }),
      mode: 'payment',
      currency: 'jpy',
      invoice: null,
      payment_intent: pi,
    };
    await send(m.id, stripeEvent('checkout.session.completed', session));
    expect((await m.api.get(`/api/conversions/${pi}`)).body.data.conversion).toMatchObject({
      amount: 5000,
      currency: 'JPY',
      commission_amount: 1500,
    });
  });

  it('a free-trial checkout tracks the customer; its first paid invoice is the initial conversion', async () => {
    const customer = uid('cus');
    const subscription = uid('sub');
    const trialInvoice = uid('in');
    const res = await send(
      m.id,
      stripeEvent(
        'checkout.session.completed',
        subscriptionCheckout({ customer, invoice: trialInvoice, subscription, amount: 0, ref: m.slug }),
      ),
    );
    expect(res.body.data.webhook.outcome).toBe('processed');
    expect((await m.api.get(`/api/customers/${customer}`)).body.data.customer.status).toBe('trial');
    const paid = uid('in');
    await send(
      m.id,
      stripeEvent(
        'invoice.paid',
        invoice({ id: paid, customer, subscription, amount: 1000, reason: 'subscription_cycle' }),
      ),
    );
    expect((await m.api.get(`/api/conversions/${paid}`)).body.data.conversion).toMatchObject({
      kind: 'initial',
      amount: 10,
    });
    expect((await m.api.get(`/api/customers/${customer}`)).body.data.customer.status).toBe('active');
  });

  it('an event without a referral, for a customer nobody referred, records nothing (200)', async () => {
    const customer = uid('cus');
    const before = await snapshot(m);
    const res = await send(
      m.id,
      stripeEvent(
        'checkout.session.completed',
        subscriptionCheckout({ customer, invoice: uid('in'), subscription: uid('sub'), amount: 4999 }),
      ),
    );
    expect(res.status).toBe(200);
    expect(res.body.data.webhook.outcome).toBe('ignored');
    const renewal = await send(
      m.id,
      stripeEvent(
        'invoice.paid',
        invoice({ id: uid('in'), customer, subscription: uid('sub'), amount: 4999, reason: 'subscription_cycle' }),
      ),
    );
    expect(renewal.body.data.webhook.outcome).toBe('ignored');
    expect(await snapshot(m)).toEqual(before);
    expectError(await m.api.get(`/api/customers/${customer}`), 404);
  });

  it("a referral that is not this organization's is ignored (200), not retried forever", async () => {
    const res = await send(
      m.id,
      stripeEvent(
        'checkout.session.completed',
        subscriptionCheckout({
          customer: uid('cus'),
          invoice: uid('in'),
          subscription: uid('sub'),
          amount: 4999,
          ref: 'no-such-slug',
        }),
      ),
    );
    expect(res.status).toBe(200);
    expect(res.body.data.webhook).toMatchObject({
      outcome: 'ignored',
      detail: expect.stringContaining('No attribution found'),
    });
  });

  it('answers 200 for event types it does not use', async () => {
    const res = await send(m.id, stripeEvent('customer.created', { id: uid('cus'), object: 'customer' }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      data: { webhook: { provider: 'stripe', event_type: 'customer.created', outcome: 'ignored' } },
    });
  });

  describe('verification', () => {
    const payload = () =>
      stripeEvent(
        'checkout.session.completed',
        subscriptionCheckout({
          customer: uid('cus'),
          invoice: uid('in'),
          subscription: uid('sub'),
          amount: 4999,
          ref: m.slug,
        }),
      );

    it('400 and nothing recorded for a forged signature, a stale timestamp, a missing header or a tampered body', async () => {
      const before = await snapshot(m);
      expectError(await send(m.id, payload(), { secret: 'whsec_someone_else' }), 400, /Invalid Stripe-Signature/);
      expectError(
        await send(m.id, payload(), { timestamp: nowSeconds() - 330 }),
        400,
        /Invalid Stripe-Signature.*tolerance/i,
      );
      expectError(await deliver('stripe', m.id, payload(), {}), 400, 'Missing Stripe-Signature header');
      const body = payload();
      const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET });
      expectError(
        await deliver('stripe', m.id, body.replace('"amount_total":4999', '"amount_total":999999'), {
          'stripe-signature': header,
        }),
        400,
      );
      expect(await snapshot(m)).toEqual(before);
    });

    it('accepts any of several v1 signatures (secret rotation)', async () => {
      const body = payload();
      const t = nowSeconds();
      const good = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: t });
      const old = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: 'whsec_old_secret', timestamp: t });
      const header = `t=${t},v1=${old.split('v1=')[1]},v1=${good.split('v1=')[1]}`;
      const res = await deliver('stripe', m.id, body, { 'stripe-signature': header });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    });

    it("400 with another organization's id in the path (its own secret differs, or it has none)", async () => {
      const other = await merchantWithSecret('stripe', 'whsec_other_organization_secret');
      expectError(await send(other.id, payload()), 400, /Invalid Stripe-Signature/);
      const bare = await createOrganization();
      expectError(
        await send(bare.id, payload()),
        400,
        'No stripe signing secret is configured for this organization (PUT /api/integrations/stripe)',
      );
      expectError(await send('not-a-uuid', payload()), 400);
      expect((await other.api.get('/api/conversions')).body.data.conversions).toEqual([]);
    });

    it('404 for an unknown provider', async () => {
      // (`paypal` is now PayPal Payouts' own route: test/api/payout-rails-paypal.test.ts.)
      expectError(await deliver('square', m.id, '{}', {}), 404, /Unknown provider: square/);
    });
  });
});
