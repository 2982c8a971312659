import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/api.js';
import { merchantWithSecret, snapshot, type Merchant } from './helpers.js';
import { paddleSigned } from './signers.js';

/**
 * One set of money rules for the API and the providers (server/src/charges/), and the channels'
 * differences as named policies (charges/channels.ts), seen from outside: the same refund is
 * refused by the same rule on both channels, answered 400/409 by the API and 200 `ignored` with
 * the reason by a provider (a 4xx would make it retry for days), and nothing changes.
 */

const SECRET = 'pdl_ntfset_channel_policies_7Hq2Wz5Lx8Cv';
const pid = (prefix: string) => `${prefix}_01${randomUUID().replaceAll('-', '')}`;

const paddleEvent = (m: Merchant, eventType: string, data: Record<string, unknown>) =>
  paddleSigned(
    m.id,
    SECRET,
    JSON.stringify({
      event_id: pid('evt'),
      event_type: eventType,
      occurred_at: new Date().toISOString(),
      notification_id: pid('ntf'),
      data,
    }),
  );

/** A completed Paddle transaction of `subtotal` cents (EUR, no tax). */
function transaction(o: { customer: string; subtotal: number; ref?: string }) {
  return {
    id: pid('txn'),
    status: 'completed',
    customer_id: o.customer,
    custom_data: o.ref ? { ref_svc_affiliate: o.ref } : null,
    currency_code: 'EUR',
    origin: 'web',
    details: {
      totals: {
        subtotal: String(o.subtotal),
        tax: '0',
        total: String(o.subtotal),
        grand_total: String(o.subtotal),
        currency_code: 'EUR',
      },
    },
    billed_at: new Date(Date.now() - 30_000).toISOString(),
  };
}

/** An approved partial refund of `subtotal` cents of the transaction. */
function partialRefund(transactionId: string, subtotal: number) {
  return {
    id: pid('adj'),
    action: 'refund',
    type: 'partial',
    transaction_id: transactionId,
    currency_code: 'EUR',
    status: 'approved',
    totals: { subtotal: String(subtotal), tax: '0', total: String(subtotal), currency_code: 'EUR' },
  };
}

describe('the same money rules on the API and provider channels', () => {
  let m: Merchant;
  beforeAll(async () => {
    m = await merchantWithSecret('paddle', SECRET);
  });

  async function sale(subtotal = 5000) {
    const txn = transaction({ customer: pid('ctm'), subtotal, ref: m.slug });
    expect((await paddleEvent(m, 'transaction.completed', txn).send()).body.data.webhook.outcome).toBe('processed');
    return txn.id;
  }

  it("a provider's refund above the conversion's amount is 200 ignored with the reason, nothing changed; the API's same refund is 400", async () => {
    const id = await sale(5000);
    const before = await snapshot(m);
    const event = paddleEvent(m, 'adjustment.updated', partialRefund(id, 6000));
    const res = await event.send();
    expect(res.status).toBe(200);
    expect(res.body.data.webhook).toMatchObject({
      outcome: 'ignored',
      detail: `amount: must not exceed the conversion amount (50) for ${id}`,
    });
    expect(await snapshot(m)).toEqual(before);
    expect((await event.send()).body.data.webhook.outcome).toBe('duplicate');

    expectError(
      await m.api.post(`/api/conversions/${id}/refund`, { amount: 60 }),
      400,
      'amount: must not exceed the conversion amount (50)',
    );
    expectError(
      await m.api.post(`/api/conversions/${id}/refund`, { amount: 60, refund_id: 're_api' }),
      400,
      'amount: must not exceed the conversion amount (50)',
    );
    expect(await snapshot(m)).toEqual(before);
  });

  it("identified refunds totalling more than the amount: the provider's is ignored with the reason, the API's is 409", async () => {
    const id = await sale(5000);
    expect((await paddleEvent(m, 'adjustment.updated', partialRefund(id, 3000)).send()).body.data.webhook.outcome).toBe(
      'processed',
    );
    const before = await snapshot(m);
    const message =
      'amount: refunds would total 60, more than the conversion amount (50); 30 was already refunded under other refund ids';
    const res = await paddleEvent(m, 'adjustment.updated', partialRefund(id, 3000)).send();
    expect(res.status).toBe(200);
    expect(res.body.data.webhook).toMatchObject({ outcome: 'ignored', detail: `${message} for ${id}` });
    expectError(await m.api.post(`/api/conversions/${id}/refund`, { amount: 30, refund_id: 're_api' }), 409, message);
    expect(await snapshot(m)).toEqual(before);
    expect((await m.api.get(`/api/conversions/${id}`)).body.data.conversion).toMatchObject({
      refunded_amount: 30,
      commission_amount: 6,
      status: 'approved',
    });
  });

  it("a tracked customer's first charge by customer alone: recurring from the API, initial from a provider", async () => {
    const kindOfFirstCharge = async (report: (customer: string) => Promise<string>) => {
      const customer = pid('ctm');
      expect((await m.api.post('/api/customers', { customer_id: customer, ref: m.slug, status: 'trial' })).status).toBe(
        201,
      );
      const conversion = (await m.api.get(`/api/conversions/${await report(customer)}`)).body.data.conversion;
      expect((await m.api.get(`/api/customers/${customer}`)).body.data.customer.status).toBe('active');
      return conversion.kind;
    };
    const byApi = await kindOfFirstCharge(async (customer) => {
      const res = await m.api.post('/api/conversions', { external_id: pid('ord'), amount: 50, customer_id: customer });
      expect(res.status).toBe(201);
      return res.body.data.conversion.external_id;
    });
    const byProvider = await kindOfFirstCharge(async (customer) => {
      const txn = transaction({ customer, subtotal: 5000 });
      expect((await paddleEvent(m, 'transaction.completed', txn).send()).body.data.webhook.outcome).toBe('processed');
      return txn.id;
    });
    expect({ byApi, byProvider }).toEqual({ byApi: 'recurring', byProvider: 'initial' });
  });

  it('a zero-amount charge: a conversion of 0 from the API, a referred trial signup (no conversion) from a provider', async () => {
    const apiCustomer = pid('ctm');
    const api = await m.api.post('/api/conversions', {
      external_id: pid('ord'),
      amount: 0,
      customer_id: apiCustomer,
      ref: m.slug,
    });
    expect(api.status).toBe(201);
    expect(api.body.data.conversion).toMatchObject({ amount: 0, commission_amount: 0, kind: 'initial' });

    const providerCustomer = pid('ctm');
    const txn = transaction({ customer: providerCustomer, subtotal: 0, ref: m.slug });
    const res = await paddleEvent(m, 'transaction.completed', txn).send();
    expect(res.body.data.webhook).toMatchObject({
      outcome: 'processed',
      detail: `Customer ${providerCustomer} tracked (trial)`,
    });
    expect((await m.api.get(`/api/customers/${providerCustomer}`)).body.data.customer.status).toBe('trial');
    expectError(await m.api.get(`/api/conversions/${txn.id}`), 404);
  });
});
