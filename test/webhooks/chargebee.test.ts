import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/api.js';
import { deliver, merchantWithSecret, nowSeconds, snapshot, type Merchant } from './helpers.js';

const PASSWORD = 'cb-webhook-password-7Hq2Zp';
const cid = (prefix: string) => `${prefix}${randomBytes(8).toString('hex')}`;
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

function event(eventType: string, content: Record<string, unknown>) {
  return JSON.stringify({
    id: cid('ev_'),
    occurred_at: nowSeconds(),
    source: 'scheduled_job',
    object: 'event',
    api_version: 'v2',
    event_type: eventType,
    webhook_status: 'scheduled',
    content,
  });
}
const send = (orgId: string, body: string, password = PASSWORD) =>
  deliver('chargebee', orgId, body, { authorization: basic('chargebee', password) });

describe('Chargebee webhooks (basic auth)', () => {
  let m: Merchant;
  beforeAll(async () => {
    m = await merchantWithSecret('chargebee', PASSWORD);
  });

  it('runs the whole lifecycle (payment_succeeded x2 -> payment_refunded -> subscription_cancelled); redelivery changes nothing', async () => {
    const customer = { id: cid('AzZ'), email: 'buyer@example.com', cf_ref_svc_affiliate: m.slug, object: 'customer' };
    const subscription = { id: cid('sub'), customer_id: customer.id, status: 'active', object: 'subscription' };
    const inv = (id: string, total: number, tax: number) => ({
      id,
      customer_id: customer.id,
      subscription_id: subscription.id,
      status: 'paid',
      total,
      amount_paid: total,
      tax,
      currency_code: 'USD',
      paid_at: nowSeconds() - 5,
      object: 'invoice',
    });
    const txn = (invoiceId: string, amount: number) => ({
      id: cid('txn_'),
      customer_id: customer.id,
      subscription_id: subscription.id,
      type: 'payment',
      status: 'success',
      amount,
      currency_code: 'USD',
      date: nowSeconds() - 5,
      linked_invoices: [{ invoice_id: invoiceId, applied_amount: amount }],
      object: 'transaction',
    });
    const firstInvoice = inv(String(1000 + Math.floor(Math.random() * 1e6)), 3300, 300);
    const secondInvoice = inv(`${firstInvoice.id}-2`, 3300, 300);
    const bodies = [
      event('payment_succeeded', {
        transaction: txn(firstInvoice.id, 3300),
        invoice: firstInvoice,
        customer,
        subscription,
      }),
      event('payment_succeeded', {
        transaction: txn(secondInvoice.id, 3300),
        invoice: secondInvoice,
        customer,
        subscription,
      }),
      event('payment_refunded', {
        transaction: {
          id: cid('txn_'),
          type: 'refund',
          status: 'success',
          amount: 1650,
          currency_code: 'USD',
          linked_credit_notes: [{ cn_id: 'CN-1', cn_reference_invoice_id: secondInvoice.id, applied_amount: 1650 }],
        },
        invoice: secondInvoice,
        credit_note: {
          id: 'CN-1',
          reference_invoice_id: secondInvoice.id,
          total: 1650,
          sub_total: 1500,
          currency_code: 'USD',
        },
        customer,
        subscription,
      }),
      event('subscription_cancelled', { subscription: { ...subscription, status: 'cancelled' }, customer }),
    ];
    for (const body of bodies) {
      const res = await send(m.id, body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.webhook.outcome).toBe('processed');
    }
    expect((await m.api.get(`/api/conversions/${firstInvoice.id}`)).body.data.conversion).toMatchObject({
      kind: 'initial',
      amount: 30,
      commission_amount: 9,
      affiliate_id: m.affiliate.id,
    });
    expect((await m.api.get(`/api/conversions/${secondInvoice.id}`)).body.data.conversion).toMatchObject({
      kind: 'recurring',
      refunded_amount: 15,
      commission_amount: 4.5,
      status: 'approved',
    });
    expect((await m.api.get(`/api/customers/${customer.id}`)).body.data.customer.status).toBe('canceled');

    const before = await snapshot(m, [customer.id]);
    for (const body of bodies)
      for (let i = 0; i < 2; i++) expect((await send(m.id, body)).body.data.webhook.outcome).toBe('duplicate');
    expect(await snapshot(m, [customer.id])).toEqual(before);
  });

  it('reads the referral from meta_data too, and ignores payments without one', async () => {
    const customer = { id: cid('cus'), object: 'customer' };
    const withMeta = { id: cid('sub'), customer_id: customer.id, meta_data: { ref_svc_affiliate: m.slug } };
    const invoice = {
      id: cid('inv'),
      customer_id: customer.id,
      total: 1000,
      amount_paid: 1000,
      tax: 0,
      currency_code: 'EUR',
    };
    expect(
      (await send(m.id, event('payment_succeeded', { invoice, customer, subscription: withMeta }))).body.data.webhook
        .outcome,
    ).toBe('processed');
    expect((await m.api.get(`/api/conversions/${invoice.id}`)).body.data.conversion).toMatchObject({
      amount: 10,
      currency: 'EUR',
    });
    const before = await snapshot(m);
    const stranger = { id: cid('cus') };
    const res = await send(
      m.id,
      event('payment_succeeded', {
        invoice: { ...invoice, id: cid('inv'), customer_id: stranger.id },
        customer: stranger,
      }),
    );
    expect(res.body.data.webhook.outcome).toBe('ignored');
    expect(await snapshot(m)).toEqual(before);
  });

  it('400 and nothing recorded for a wrong password or missing credentials; any username', async () => {
    const before = await snapshot(m);
    const body = event('payment_succeeded', {
      invoice: { id: cid('inv'), total: 1000, amount_paid: 1000, currency_code: 'USD' },
      customer: { id: cid('c'), cf_ref_svc_affiliate: m.slug },
    });
    expectError(await send(m.id, body, 'wrong-password'), 400, 'Invalid basic auth credentials');
    expectError(await deliver('chargebee', m.id, body, {}), 400, 'Missing basic auth credentials');
    expectError(await deliver('chargebee', m.id, body, { authorization: `Bearer ${PASSWORD}` }), 400);
    expect(await snapshot(m)).toEqual(before);
    const ok = await deliver('chargebee', m.id, body, { authorization: basic('any-user', PASSWORD) });
    expect(ok.status).toBe(200);
  });

  it("400 for another organization's id in the path", async () => {
    const other = await merchantWithSecret('chargebee', 'another-org-password');
    expectError(
      await send(
        other.id,
        event('payment_succeeded', {
          invoice: { id: cid('inv'), total: 1000, amount_paid: 1000, currency_code: 'USD' },
        }),
      ),
      400,
    );
  });
});
