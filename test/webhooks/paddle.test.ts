import { createHmac, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/api.js';
import { deliver, merchantWithSecret, nowSeconds, snapshot, type Merchant } from './helpers.js';

const SECRET = 'pdl_ntfset_01hv8x2k9w_Rk2v0Xc7QpLs4YtB1nM8dJf6HgZ3aWe5';
const pid = (prefix: string) => `${prefix}_01${randomBytes(12).toString('hex')}`;

function signed(
  orgId: string,
  eventType: string,
  data: Record<string, unknown>,
  opts: { secret?: string; ts?: number; extraH1?: string } = {},
) {
  const body = JSON.stringify({
    event_id: pid('evt'),
    event_type: eventType,
    occurred_at: new Date().toISOString(),
    notification_id: pid('ntf'),
    data,
  });
  const ts = opts.ts ?? nowSeconds();
  const h1 = createHmac('sha256', opts.secret ?? SECRET)
    .update(`${ts}:${body}`)
    .digest('hex');
  const header = `ts=${ts};${opts.extraH1 ? `h1=${opts.extraH1};` : ''}h1=${h1}`;
  return {
    body,
    headers: { 'paddle-signature': header },
    send: () => deliver('paddle', orgId, body, { 'paddle-signature': header }),
  };
}

function transaction(o: {
  customer: string;
  subscription: string | null;
  origin: string;
  subtotal: number;
  tax: number;
  ref?: string;
}) {
  const total = o.subtotal + o.tax;
  return {
    id: pid('txn'),
    status: 'completed',
    customer_id: o.customer,
    address_id: pid('add'),
    business_id: null,
    custom_data: o.ref ? { ref_svc_affiliate: o.ref } : null,
    currency_code: 'EUR',
    origin: o.origin,
    subscription_id: o.subscription,
    invoice_id: pid('inv'),
    invoice_number: '325-10566',
    collection_mode: 'automatic',
    billing_period: { starts_at: new Date().toISOString(), ends_at: new Date(Date.now() + 30 * 864e5).toISOString() },
    details: {
      totals: {
        subtotal: String(o.subtotal),
        discount: '0',
        tax: String(o.tax),
        total: String(total),
        credit: '0',
        balance: '0',
        grand_total: String(total),
        fee: null,
        earnings: null,
        currency_code: 'EUR',
      },
    },
    created_at: new Date(Date.now() - 60_000).toISOString(),
    updated_at: new Date().toISOString(),
    billed_at: new Date(Date.now() - 30_000).toISOString(),
  };
}

describe('Paddle Billing webhooks', () => {
  let m: Merchant;
  beforeAll(async () => {
    m = await merchantWithSecret('paddle', SECRET);
  });

  it('runs the whole lifecycle (transaction.completed -> renewal -> adjustment refund -> subscription.canceled); redelivery changes nothing', async () => {
    const customer = pid('ctm');
    const subscription = pid('sub');
    const first = transaction({ customer, subscription, origin: 'web', subtotal: 5000, tax: 1000, ref: m.slug });
    const renewal = transaction({
      customer,
      subscription,
      origin: 'subscription_recurring',
      subtotal: 5000,
      tax: 1000,
    });
    const adjustment = {
      id: pid('adj'),
      action: 'refund',
      type: 'partial',
      transaction_id: renewal.id,
      subscription_id: subscription,
      customer_id: customer,
      reason: 'requested_by_customer',
      currency_code: 'EUR',
      status: 'approved',
      items: [],
      totals: { subtotal: '2000', tax: '400', total: '2400', fee: '120', earnings: '2280', currency_code: 'EUR' },
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
    };
    const deliveries = [
      signed(m.id, 'transaction.completed', first),
      signed(m.id, 'transaction.completed', renewal),
      // Refunds wait for Paddle's approval: the pending adjustment changes nothing.
      signed(m.id, 'adjustment.created', { ...adjustment, status: 'pending_approval' }),
      signed(m.id, 'adjustment.updated', adjustment),
      signed(m.id, 'subscription.canceled', {
        id: subscription,
        status: 'canceled',
        customer_id: customer,
        custom_data: null,
        canceled_at: new Date().toISOString(),
      }),
    ];
    const outcomes = [];
    for (const d of deliveries) {
      const res = await d.send();
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      outcomes.push(res.body.data.webhook.outcome);
    }
    expect(outcomes).toEqual(['processed', 'processed', 'ignored', 'processed', 'processed']);
    expect((await m.api.get(`/api/conversions/${first.id}`)).body.data.conversion).toMatchObject({
      kind: 'initial',
      amount: 50,
      currency: 'EUR',
      commission_amount: 15,
    });
    expect((await m.api.get(`/api/conversions/${renewal.id}`)).body.data.conversion).toMatchObject({
      kind: 'recurring',
      refunded_amount: 20,
      commission_amount: 9,
      status: 'approved',
    });
    expect((await m.api.get(`/api/customers/${customer}`)).body.data.customer.status).toBe('canceled');

    const before = await snapshot(m, [customer]);
    for (const d of deliveries)
      for (let i = 0; i < 2; i++) expect((await d.send()).body.data.webhook.outcome).toBe('duplicate');
    expect(await snapshot(m, [customer])).toEqual(before);

    const full = signed(m.id, 'adjustment.created', {
      ...adjustment,
      id: pid('adj'),
      type: 'full',
      transaction_id: first.id,
    });
    expect((await full.send()).body.data.webhook.outcome).toBe('processed');
    expect((await m.api.get(`/api/conversions/${first.id}`)).body.data.conversion).toMatchObject({
      status: 'reversed',
      commission_amount: 0,
      refunded_amount: 50,
    });
  });

  it('a transaction without a referral for an unknown customer records nothing', async () => {
    const before = await snapshot(m);
    const res = await signed(
      m.id,
      'transaction.completed',
      transaction({ customer: pid('ctm'), subscription: null, origin: 'web', subtotal: 100, tax: 0 }),
    ).send();
    expect(res.body.data.webhook.outcome).toBe('ignored');
    expect(await snapshot(m)).toEqual(before);
  });

  it('400 and nothing recorded for a forged or stale signature; accepts several h1 during rotation', async () => {
    const before = await snapshot(m);
    const tx = () =>
      transaction({ customer: pid('ctm'), subscription: null, origin: 'web', subtotal: 100, tax: 0, ref: m.slug });
    expectError(
      await signed(m.id, 'transaction.completed', tx(), { secret: 'pdl_ntfset_wrong' }).send(),
      400,
      /Invalid Paddle-Signature/,
    );
    expectError(await signed(m.id, 'transaction.completed', tx(), { ts: nowSeconds() - 330 }).send(), 400, /tolerance/);
    expectError(
      await deliver('paddle', m.id, JSON.stringify({ event_type: 'transaction.completed', data: tx() }), {}),
      400,
      'Missing Paddle-Signature header',
    );
    const good = signed(m.id, 'transaction.completed', tx());
    expectError(
      await deliver('paddle', m.id, good.body.replace('"status":"completed"', '"status":"completed" '), good.headers),
      400,
    );
    expect(await snapshot(m)).toEqual(before);
    const rotated = await signed(m.id, 'transaction.completed', tx(), { extraH1: 'ab'.repeat(32) }).send();
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.webhook.outcome).toBe('processed');
  });

  it("400 for another organization's id in the path", async () => {
    const other = await merchantWithSecret('paddle', 'pdl_ntfset_other_org_secret');
    expectError(
      await signed(
        other.id,
        'transaction.completed',
        transaction({ customer: pid('ctm'), subscription: null, origin: 'web', subtotal: 100, tax: 0, ref: m.slug }),
      ).send(),
      400,
    );
  });
});
