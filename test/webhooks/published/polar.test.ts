import { randomUUID } from 'node:crypto';
import { beforeEach, expect, it } from 'vitest';
import { merchantWithSecret, type Merchant } from '../helpers.js';
import { polarSigned } from '../signers.js';
import { describePublished, published } from './fixtures.js';
import { conversionOf, customerOf, expectOutcome } from './walk.js';

const SECRET = 'polar_whs_published_8Fg2Hj5Kl9Zx3Cv6';

describePublished("Polar, on polar-js's published webhook payloads", () => {
  let m: Merchant;
  /** The published payload of `file`, with its `data` replaced, signed with Standard Webhooks. */
  const send = (file: string, data: Record<string, unknown>) => {
    const payload = published('polar', file);
    return polarSigned(m.id, SECRET, JSON.stringify({ ...payload, timestamp: new Date().toISOString(), data }));
  };
  beforeEach(async () => {
    m = await merchantWithSecret('polar', SECRET);
  });

  it('walks first payment -> renewal -> partial refund -> full refund -> cancellation', async () => {
    // The published examples hold "<value>" placeholders for ids: the walk gives the order, the
    // subscription and the customer ids of their own, the customer being the published customer object's.
    const canceled = published('polar', 'subscription.canceled.json').data;
    const customer: string = canceled.customer.id;
    const subscriptionId = randomUUID();
    const tie = (order: any, reason: string, createdAt: string) =>
      Object.assign(order, {
        id: randomUUID(),
        customer_id: customer,
        subscription_id: subscriptionId,
        billing_reason: reason,
        created_at: createdAt,
        subscription: { ...order.subscription, id: subscriptionId, customer_id: customer },
      });

    // polar/order.paid.json: 100.00 less a 10.00 discount = 90.00 net, 7.20 tax, 97.20 charged.
    const first = tie(published('polar', 'order.paid.json').data, 'subscription_create', '2025-12-27T21:37:16.242Z');
    first.metadata = { ...first.metadata, ref_svc_affiliate: m.slug };
    await expectOutcome(send('order.paid.json', first), 'processed');
    expect(await conversionOf(m, first.id)).toMatchObject({
      amount: 90,
      currency: 'USD',
      kind: 'initial',
      commission_amount: 27,
      customer_id: customer,
      status: 'approved',
    });
    expect(await customerOf(m, customer)).toMatchObject({ status: 'active', affiliate_id: m.affiliate.id });

    const renewal = tie(published('polar', 'order.paid.json').data, 'subscription_cycle', '2026-01-27T21:37:16.242Z');
    await expectOutcome(send('order.paid.json', renewal), 'processed');
    expect(await conversionOf(m, renewal.id)).toMatchObject({ amount: 90, kind: 'recurring', commission_amount: 27 });

    // polar/order.refunded.json is published with nothing refunded yet: 30.00 (+2.40 tax) here,
    // then the rest. refunded_amount, like net_amount, is before tax.
    const refunded = (amount: number, tax: number, status: string) =>
      Object.assign(published('polar', 'order.refunded.json').data, {
        ...renewal,
        status,
        refunded_amount: amount,
        refunded_tax_amount: tax,
        refundable_amount: 9000 - amount,
        refundable_tax_amount: 720 - tax,
      });
    await expectOutcome(send('order.refunded.json', refunded(3000, 240, 'partially_refunded')), 'processed');
    expect(await conversionOf(m, renewal.id)).toMatchObject({
      status: 'approved',
      refunded_amount: 30,
      commission_amount: 18,
    });
    await expectOutcome(send('order.refunded.json', refunded(9000, 720, 'refunded')), 'processed');
    expect(await conversionOf(m, renewal.id)).toMatchObject({
      status: 'reversed',
      refunded_amount: 90,
      commission_amount: 0,
    });

    // polar/subscription.canceled.json, for this subscription and customer.
    await expectOutcome(
      send('subscription.canceled.json', { ...canceled, id: subscriptionId, customer_id: customer }),
      'processed',
    );
    expect(await customerOf(m, customer)).toMatchObject({ status: 'canceled', affiliate_id: m.affiliate.id });
    expect(await conversionOf(m, first.id)).toMatchObject({
      amount: 90,
      commission_amount: 27,
      refunded_amount: 0,
      status: 'approved',
    });
  });

  it('order.refunded as published (nothing refunded yet) changes nothing', async () => {
    const order = Object.assign(published('polar', 'order.paid.json').data, {
      id: randomUUID(),
      customer_id: randomUUID(),
    });
    order.metadata = { ...order.metadata, ref_svc_affiliate: m.slug };
    await expectOutcome(send('order.paid.json', order), 'processed');
    const asPublished = Object.assign(published('polar', 'order.refunded.json').data, {
      id: order.id,
      customer_id: order.customer_id,
    });
    await expectOutcome(send('order.refunded.json', asPublished), 'ignored');
    expect(await conversionOf(m, order.id)).toMatchObject({
      amount: 90,
      commission_amount: 27,
      refunded_amount: 0,
      status: 'approved',
    });
  });
});
