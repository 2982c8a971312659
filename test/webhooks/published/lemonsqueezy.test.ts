import { beforeEach, expect, it } from 'vitest';
import { merchantWithSecret, type Merchant } from '../helpers.js';
import { lemonSqueezySigned } from '../signers.js';
import { describePublished, published } from './fixtures.js';
import { conversionOf, customerOf, expectOutcome } from './walk.js';

const SECRET = 'ls-published-signing-secret-6Hn3';

/**
 * Lemon Squeezy's webhook body is the JSON:API resource object in `data`, with the event name and
 * the checkout's custom data in `meta` (docs.lemonsqueezy.com/help/webhooks/webhook-requests).
 */
function envelope(eventName: string, data: unknown, customData?: Record<string, string>) {
  return JSON.stringify({ meta: { event_name: eventName, ...(customData ? { custom_data: customData } : {}) }, data });
}

describePublished("Lemon Squeezy, on the objects of Lemon Squeezy's API documentation", () => {
  let m: Merchant;
  const send = (eventName: string, data: unknown, customData?: Record<string, string>) =>
    lemonSqueezySigned(m.id, SECRET, envelope(eventName, data, customData), eventName);
  beforeEach(async () => {
    m = await merchantWithSecret('lemonsqueezy', SECRET);
  });

  it('walks first payment -> renewal -> partial refund -> full refund -> cancellation', async () => {
    const referral = { ref_svc_affiliate: m.slug };
    // lemonsqueezy/order.json as published: 11.99 USD of which 2.00 VAT (tax_inclusive false).
    const order = published('lemonsqueezy', 'order.json');
    const customer = String(order.attributes.customer_id);
    await expectOutcome(send('order_created', order, referral), 'processed');
    expect(await conversionOf(m, `lemonsqueezy:order:${order.id}`)).toMatchObject({
      amount: 9.99,
      currency: 'USD',
      kind: 'initial',
      commission_amount: 3,
      customer_id: customer,
    });
    expect(await customerOf(m, customer)).toMatchObject({ status: 'active', affiliate_id: m.affiliate.id });

    // lemonsqueezy/subscription-invoice.json as published: billing_reason "initial", the order's charge.
    const initialInvoice = published('lemonsqueezy', 'subscription-invoice.json');
    expect(initialInvoice.attributes.customer_id).toBe(order.attributes.customer_id);
    await expectOutcome(send('subscription_payment_success', initialInvoice, referral), 'ignored');

    // The renewal: the same invoice a month later (Lemon Squeezy publishes no renewal), id 2.
    const renewal = published('lemonsqueezy', 'subscription-invoice.json');
    Object.assign(renewal, { id: '2' });
    Object.assign(renewal.attributes, {
      billing_reason: 'renewal',
      created_at: '2023-02-18T12:16:24.000000Z',
      updated_at: '2023-02-18T12:16:24.000000Z',
    });
    await expectOutcome(send('subscription_payment_success', renewal, referral), 'processed');
    const renewalId = 'lemonsqueezy:subscription-invoice:2';
    expect(await conversionOf(m, renewalId)).toMatchObject({ amount: 9.99, kind: 'recurring', commission_amount: 3 });

    // Refunded in part: the published invoice's refunded_amount (1.00 of 9.99), status set to match.
    await expectOutcome(
      send(
        'subscription_payment_refunded',
        { ...renewal, attributes: { ...renewal.attributes, status: 'partial_refund' } },
        referral,
      ),
      'processed',
    );
    // 3.00 x (9.99 - 1.00) / 9.99 = 2.6997 -> 2.70
    expect(await conversionOf(m, renewalId)).toMatchObject({
      status: 'approved',
      refunded_amount: 1,
      commission_amount: 2.7,
    });
    // Then in full.
    const fullyRefunded = {
      ...renewal.attributes,
      status: 'refunded',
      refunded: true,
      refunded_at: '2023-02-20T10:00:00.000000Z',
      refunded_amount: 999,
      refunded_amount_usd: 999,
    };
    await expectOutcome(
      send('subscription_payment_refunded', { ...renewal, attributes: fullyRefunded }, referral),
      'processed',
    );
    expect(await conversionOf(m, renewalId)).toMatchObject({
      status: 'reversed',
      refunded_amount: 9.99,
      commission_amount: 0,
    });

    // lemonsqueezy/subscription.json (published active), as subscription_cancelled sends it.
    const subscription = published('lemonsqueezy', 'subscription.json');
    Object.assign(subscription.attributes, {
      status: 'cancelled',
      status_formatted: 'Cancelled',
      cancelled: true,
      ends_at: subscription.attributes.renews_at,
    });
    expect(subscription.attributes.customer_id).toBe(order.attributes.customer_id);
    await expectOutcome(send('subscription_cancelled', subscription, referral), 'processed');
    expect(await customerOf(m, customer)).toMatchObject({ status: 'canceled', affiliate_id: m.affiliate.id });
    expect(await conversionOf(m, `lemonsqueezy:order:${order.id}`)).toMatchObject({
      amount: 9.99,
      commission_amount: 3,
      refunded_amount: 0,
      status: 'approved',
    });
  });

  it('a refunded order (order_refunded) reverses its sale; tax-inclusive prices keep tax out', async () => {
    // order.json with tax_inclusive true: total 11.99 includes the 2.00 of tax.
    const order = published('lemonsqueezy', 'order.json');
    Object.assign(order.attributes, { tax_inclusive: true, subtotal: 1199 });
    await expectOutcome(send('order_created', order, { ref_svc_affiliate: m.slug }), 'processed');
    expect(await conversionOf(m, `lemonsqueezy:order:${order.id}`)).toMatchObject({
      amount: 9.99,
      commission_amount: 3,
    });
    const refunded = {
      ...order.attributes,
      status: 'refunded',
      refunded: true,
      refunded_at: '2021-08-18T09:45:53.000000Z',
    };
    await expectOutcome(send('order_refunded', { ...order, attributes: refunded }), 'processed');
    expect(await conversionOf(m, `lemonsqueezy:order:${order.id}`)).toMatchObject({
      status: 'reversed',
      refunded_amount: 9.99,
      commission_amount: 0,
    });
  });
});
