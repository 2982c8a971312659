import { beforeEach, expect, it } from 'vitest';
import { merchantWithSecret, nowSeconds, type Merchant } from '../helpers.js';
import { chargebeeSigned } from '../signers.js';
import { describePublished, published } from './fixtures.js';
import { conversionOf, customerOf, expectOutcome } from './walk.js';

const PASSWORD = 'cb-published-password-3Rt7';
const DAY = 24 * 3600;
let seq = 0;
const fresh = (prefix: string) => `${prefix}walk${Date.now().toString(36)}${(++seq).toString(36)}`;

/**
 * Chargebee's published samples abbreviate every object ("...": "...") and elide every id. As
 * SOURCES.txt says, ids are added at send time: transaction.id, invoice.id, customer.id,
 * subscription.id and customer_id. Each delivery gets an event id of its own.
 */
function event(file: string, eventType: string, content: Record<string, unknown>) {
  return JSON.stringify({
    ...published('chargebee', file),
    id: fresh('ev_'),
    event_type: eventType,
    occurred_at: nowSeconds(),
    content,
  });
}

describePublished("Chargebee, on Chargebee's published sample events", () => {
  let m: Merchant;
  const send = (body: string) => chargebeeSigned(m.id, PASSWORD, body);
  beforeEach(async () => {
    m = await merchantWithSecret('chargebee', PASSWORD);
  });

  it('walks first payment -> renewal -> partial refund -> full refund -> cancellation', async () => {
    const sample = published('chargebee', 'payment_refunded.json').content;
    // The refund sample's customer (its transaction names it), with the referral as a custom field.
    const customerId: string = sample.transaction.customer_id;
    const customer = { ...sample.customer, id: customerId, cf_ref_svc_affiliate: m.slug };
    const subscription = { ...sample.subscription, id: fresh('sub'), customer_id: customerId };

    // Chargebee's payment_succeeded sample could not be retrieved (SOURCES.txt); it carries the same
    // transaction, invoice, customer and subscription as the refund sample: that content, with the
    // transaction a payment of the invoice's amount_paid (10.00 USD, tax absent: none).
    const payment = (invoiceId: string, date: number) => ({
      transaction: {
        ...sample.transaction,
        id: fresh('txn_'),
        type: 'payment',
        status: 'success',
        amount: sample.invoice.amount_paid,
        date,
      },
      invoice: {
        ...sample.invoice,
        id: invoiceId,
        customer_id: customerId,
        subscription_id: subscription.id,
        paid_at: date,
      },
      customer,
      subscription,
    });
    const firstInvoice = fresh('inv_');
    await expectOutcome(
      send(event('payment_refunded.json', 'payment_succeeded', payment(firstInvoice, nowSeconds() - 31 * DAY))),
      'processed',
    );
    expect(await conversionOf(m, firstInvoice)).toMatchObject({
      amount: 10,
      currency: 'USD',
      kind: 'initial',
      commission_amount: 3,
      customer_id: customerId,
      status: 'approved',
    });
    expect(await customerOf(m, customerId)).toMatchObject({ status: 'active', affiliate_id: m.affiliate.id });

    const renewalInvoice = fresh('inv_');
    await expectOutcome(
      send(event('payment_refunded.json', 'payment_succeeded', payment(renewalInvoice, nowSeconds() - DAY))),
      'processed',
    );
    expect(await conversionOf(m, renewalInvoice)).toMatchObject({
      amount: 10,
      kind: 'recurring',
      commission_amount: 3,
    });

    // chargebee/payment_refunded.json as published: a refund of 1.00 of the invoice's 10.00 paid,
    // with the ids of the renewal added; then a second refund transaction of the remaining 9.00.
    const refund = (amount: number) => ({
      ...sample,
      transaction: { ...sample.transaction, id: fresh('txn_'), amount },
      invoice: { ...sample.invoice, id: renewalInvoice, customer_id: customerId, subscription_id: subscription.id },
      credit_note: {
        ...sample.credit_note,
        id: fresh('CN-'),
        reference_invoice_id: renewalInvoice,
        customer_id: customerId,
      },
      customer: { ...sample.customer, id: customerId },
      subscription,
    });
    await expectOutcome(
      send(event('payment_refunded.json', 'payment_refunded', refund(sample.transaction.amount))),
      'processed',
    );
    expect(await conversionOf(m, renewalInvoice)).toMatchObject({
      status: 'approved',
      refunded_amount: 1,
      commission_amount: 2.7,
    });
    await expectOutcome(send(event('payment_refunded.json', 'payment_refunded', refund(900))), 'processed');
    expect(await conversionOf(m, renewalInvoice)).toMatchObject({
      status: 'reversed',
      refunded_amount: 10,
      commission_amount: 0,
    });

    // chargebee/subscription_cancelled.json with the subscription's and customer's ids.
    const cancelled = published('chargebee', 'subscription_cancelled.json').content;
    const content = {
      ...cancelled,
      subscription: { ...cancelled.subscription, id: subscription.id, customer_id: customerId },
      customer: { ...cancelled.customer, id: customerId },
    };
    await expectOutcome(send(event('subscription_cancelled.json', 'subscription_cancelled', content)), 'processed');
    expect(await customerOf(m, customerId)).toMatchObject({ status: 'canceled', affiliate_id: m.affiliate.id });
    expect(await conversionOf(m, firstInvoice)).toMatchObject({
      amount: 10,
      commission_amount: 3,
      refunded_amount: 0,
      status: 'approved',
    });
  });

  it('the refund sample against an invoice recorded through the API: 1.00 of 10.00 refunds a tenth, not the whole charge', async () => {
    const sample = published('chargebee', 'payment_refunded.json').content;
    const invoiceId = fresh('inv_');
    const customerId: string = sample.transaction.customer_id;
    const recorded = await m.api.post('/api/conversions', {
      external_id: invoiceId,
      amount: 10,
      customer_id: customerId,
      ref: m.slug,
    });
    expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
    const content = {
      ...sample,
      transaction: { ...sample.transaction, id: fresh('txn_') },
      invoice: { ...sample.invoice, id: invoiceId, customer_id: customerId },
      customer: { ...sample.customer, id: customerId },
      subscription: { ...sample.subscription, id: fresh('sub'), customer_id: customerId },
    };
    await expectOutcome(send(event('payment_refunded.json', 'payment_refunded', content)), 'processed');
    expect(await conversionOf(m, invoiceId)).toMatchObject({
      status: 'approved',
      refunded_amount: 1,
      commission_amount: 2.7,
    });
  });
});
