import { beforeEach, expect, it } from 'vitest';
import { merchantWithSecret, nowSeconds, type Merchant } from '../helpers.js';
import { stripeSigned } from '../signers.js';
import { describePublished, published } from './fixtures.js';
import { conversionOf, customerOf, expectOutcome } from './walk.js';

const SECRET = 'whsec_published_7d2e9c4b1a6f8e3d5c0b';
const DAY = 24 * 3600;
let seq = 0;
const fresh = (prefix: string) => `${prefix}_walk${Date.now().toString(36)}${(++seq).toString(36)}`;

/**
 * stripe/event.json is the envelope Stripe publishes (stripe/openapi fixtures3.json); each delivery
 * gets an id of its own (events are remembered by id), a type and its object, as SOURCES.txt says.
 */
function event(type: string, object: Record<string, unknown>) {
  const e = published('stripe', 'event.json');
  // Published from test mode (livemode false), which lands in the merchant's test data (spec/test-mode.md):
  // these walks read live data with the live key, so the envelope says live.
  Object.assign(e, { id: fresh('evt'), type, created: nowSeconds(), data: { object }, livemode: true });
  return JSON.stringify(e);
}

/**
 * stripe/invoice.json as it would be once paid: published as a draft with amount_paid 0 (Stripe
 * publishes no paid invoice), so status, amount_paid, the billing reason, the subscription under
 * parent (its published `type` is a placeholder) and the times are set here.
 */
function paidInvoice(o: { id?: string; subscription: string; reason: string; paidAt: number; ref?: string }) {
  const invoice = published('stripe', 'invoice.json');
  Object.assign(invoice, {
    id: o.id ?? invoice.id,
    status: 'paid',
    amount_paid: invoice.amount_due,
    amount_remaining: 0,
    billing_reason: o.reason,
    status_transitions: { ...invoice.status_transitions, finalized_at: o.paidAt - 60, paid_at: o.paidAt },
    created: o.paidAt - 3600,
    parent: {
      type: 'subscription_details',
      quote_details: null,
      subscription_details: { metadata: o.ref ? { ref_svc_affiliate: o.ref } : null, subscription: o.subscription },
    },
  });
  return invoice;
}

describePublished("Stripe, on Stripe's published objects", () => {
  let m: Merchant;
  const send = (body: string) => stripeSigned(m.id, SECRET, body);
  beforeEach(async () => {
    m = await merchantWithSecret('stripe', SECRET);
  });

  it('walks first payment -> renewal -> partial refund -> full refund -> cancellation', async () => {
    const subscription = published('stripe', 'subscription.json');
    const first = paidInvoice({
      subscription: subscription.id,
      reason: 'subscription_create',
      paidAt: nowSeconds() - 31 * DAY,
      ref: m.slug,
    });
    expect(first.customer).toBe(subscription.customer); // the published invoice and subscription share their customer
    // stripe/checkout.session.json is an open one-off session: completed here as the subscription
    // checkout that opened `subscription` with its first invoice, paid; its amounts are that invoice's.
    // currency_conversion (Adaptive Pricing) is left out: this session is in the merchant's currency.
    const session = published('stripe', 'checkout.session.json');
    Object.assign(session, {
      mode: 'subscription',
      status: 'complete',
      payment_status: 'paid',
      customer: subscription.customer,
      subscription: subscription.id,
      invoice: first.id,
      payment_intent: null,
      amount_subtotal: first.subtotal,
      amount_total: first.total,
      currency: first.currency,
      total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: first.total - first.total_excluding_tax },
      currency_conversion: null,
      created: first.created,
      metadata: { ref_svc_affiliate: m.slug },
    });
    await expectOutcome(send(event('checkout.session.completed', session)), 'processed');
    // The first invoice is the same charge: counted once.
    await expectOutcome(send(event('invoice.paid', first)), 'ignored');
    expect(await conversionOf(m, first.id)).toMatchObject({
      amount: 10,
      currency: 'USD',
      kind: 'initial',
      commission_amount: 3,
      customer_id: subscription.customer,
      status: 'approved',
      refunded_amount: 0,
    });
    expect(await customerOf(m, subscription.customer)).toMatchObject({
      status: 'active',
      affiliate_id: m.affiliate.id,
    });

    // Renewal: the same published invoice, a month later, under an id of its own.
    const renewal = paidInvoice({
      id: fresh('in'),
      subscription: subscription.id,
      reason: 'subscription_cycle',
      paidAt: nowSeconds() - DAY,
    });
    await expectOutcome(send(event('invoice.paid', renewal)), 'processed');
    // stripe/invoice_payment.json ties the renewal to its payment intent (the published one names none).
    const paymentIntent = fresh('pi');
    const invoicePayment = published('stripe', 'invoice_payment.json');
    Object.assign(invoicePayment, {
      id: fresh('inpay'),
      invoice: renewal.id,
      status: 'paid',
      amount_paid: renewal.amount_paid,
      currency: renewal.currency,
      payment: { type: 'payment_intent', payment_intent: paymentIntent },
    });
    await expectOutcome(send(event('invoice_payment.paid', invoicePayment)), 'processed');
    expect(await conversionOf(m, renewal.id)).toMatchObject({ amount: 10, kind: 'recurring', commission_amount: 3 });

    // stripe/charge.json, as the renewal's charge: its payment intent, its amount, captured; then
    // refunded a quarter, then the rest (amount_refunded is the charge's cumulative total).
    const charge = published('stripe', 'charge.json');
    Object.assign(charge, {
      payment_intent: paymentIntent,
      customer: subscription.customer,
      amount: renewal.amount_paid,
      amount_captured: renewal.amount_paid,
      captured: true,
    });
    await expectOutcome(
      send(event('charge.refunded', { ...charge, amount_refunded: 250, refunded: false })),
      'processed',
    );
    expect(await conversionOf(m, renewal.id)).toMatchObject({
      status: 'approved',
      refunded_amount: 2.5,
      commission_amount: 2.25,
    });
    await expectOutcome(
      send(event('charge.refunded', { ...charge, amount_refunded: 1000, refunded: true })),
      'processed',
    );
    expect(await conversionOf(m, renewal.id)).toMatchObject({
      status: 'reversed',
      refunded_amount: 10,
      commission_amount: 0,
      reversed_at: expect.any(String),
    });

    // stripe/subscription.json, ended.
    await expectOutcome(
      send(event('customer.subscription.deleted', { ...subscription, status: 'canceled', ended_at: nowSeconds() })),
      'processed',
    );
    expect(await customerOf(m, subscription.customer)).toMatchObject({
      status: 'canceled',
      affiliate_id: m.affiliate.id,
    });
    expect(await conversionOf(m, first.id)).toMatchObject({
      amount: 10,
      commission_amount: 3,
      status: 'approved',
      refunded_amount: 0,
    });
  });

  it('a one-off Checkout payment that also creates an invoice counts once; a refund by its payment intent reaches it; tax is excluded', async () => {
    // stripe/checkout.session.json is a one-off (mode payment) session with invoice_creation
    // enabled: completed and paid here, 11.90 of which 1.90 tax, with the invoice it created.
    const invoice = paidInvoice({ subscription: '', reason: 'manual', paidAt: nowSeconds() - 60 });
    Object.assign(invoice, {
      parent: null,
      total: 1190,
      total_excluding_tax: 1000,
      amount_due: 1190,
      amount_paid: 1190,
    });
    const session = published('stripe', 'checkout.session.json');
    Object.assign(session, {
      status: 'complete',
      payment_status: 'paid',
      customer: invoice.customer,
      invoice: invoice.id,
      amount_subtotal: 1000,
      amount_total: 1190,
      currency: 'usd',
      total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 190 },
      currency_conversion: null,
      created: nowSeconds() - 90,
      metadata: { ref_svc_affiliate: m.slug },
    });
    expect(session.mode).toBe('payment');
    expect(session.invoice_creation.enabled).toBe(true);
    await expectOutcome(send(event('checkout.session.completed', session)), 'processed');
    // Its invoice.paid (billing_reason manual, no referral, a customer now tracked) is the same charge.
    await expectOutcome(send(event('invoice.paid', invoice)), 'ignored');
    const list = await m.api.get(`/api/conversions?customer_id=${invoice.customer}`);
    expect(list.body.data.conversions).toHaveLength(1);
    expect(await conversionOf(m, invoice.id)).toMatchObject({ amount: 10, kind: 'initial', commission_amount: 3 });

    const charge = published('stripe', 'charge.json');
    Object.assign(charge, {
      payment_intent: session.payment_intent,
      amount: 1190,
      amount_captured: 1190,
      captured: true,
      amount_refunded: 1190,
      refunded: true,
    });
    await expectOutcome(send(event('charge.refunded', charge)), 'processed');
    expect(await conversionOf(m, invoice.id)).toMatchObject({
      status: 'reversed',
      refunded_amount: 10,
      commission_amount: 0,
    });
  });

  it("an Adaptive Pricing session (currency_conversion, sessions before 2025-03-31) is recorded in the merchant's currency, tax excluded", async () => {
    const session = published('stripe', 'checkout.session.json');
    // The customer paid 11.04 EUR, 1.84 of it tax; the merchant priced 12.00 USD tax included.
    Object.assign(session, {
      status: 'complete',
      payment_status: 'paid',
      customer: fresh('cus'),
      amount_total: 1104,
      currency: 'eur',
      total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 184 },
      currency_conversion: {
        ...session.currency_conversion,
        amount_subtotal: 1000,
        amount_total: 1200,
        fx_rate: '0.92',
        source_currency: 'usd',
      },
      created: nowSeconds() - 60,
      metadata: { ref_svc_affiliate: m.slug },
    });
    await expectOutcome(send(event('checkout.session.completed', session)), 'processed');
    expect(await conversionOf(m, session.payment_intent)).toMatchObject({
      amount: 10,
      currency: 'USD',
      commission_amount: 3,
    });
  });

  it('zero-decimal currencies and inclusive tax on invoices: total_excluding_tax, in yen', async () => {
    const subscription = published('stripe', 'subscription.json');
    const first = paidInvoice({
      subscription: subscription.id,
      reason: 'subscription_create',
      paidAt: nowSeconds() - 60,
      ref: m.slug,
    });
    Object.assign(first, {
      currency: 'jpy',
      total: 1100,
      total_excluding_tax: 1000,
      amount_due: 1100,
      amount_paid: 1100,
    });
    await expectOutcome(send(event('invoice.paid', first)), 'processed');
    expect(await conversionOf(m, first.id)).toMatchObject({ amount: 1000, currency: 'JPY', commission_amount: 300 });
    // Half of the next invoice paid from the customer's balance: tax comes off in proportion.
    const renewal = paidInvoice({
      id: fresh('in'),
      subscription: subscription.id,
      reason: 'subscription_cycle',
      paidAt: nowSeconds() - 30,
    });
    Object.assign(renewal, {
      currency: 'jpy',
      total: 1100,
      total_excluding_tax: 1000,
      starting_balance: -550,
      amount_due: 550,
      amount_paid: 550,
    });
    await expectOutcome(send(event('invoice.paid', renewal)), 'processed');
    expect(await conversionOf(m, renewal.id)).toMatchObject({
      amount: 500,
      currency: 'JPY',
      kind: 'recurring',
      commission_amount: 150,
    });
  });

  it('a trial: the zero invoice tracks the customer as trial, the first paid invoice is the initial sale', async () => {
    const subscription = published('stripe', 'subscription.json');
    const trial = paidInvoice({
      subscription: subscription.id,
      reason: 'subscription_create',
      paidAt: nowSeconds() - 60,
      ref: m.slug,
    });
    Object.assign(trial, { total: 0, subtotal: 0, total_excluding_tax: 0, amount_due: 0, amount_paid: 0 });
    await expectOutcome(send(event('invoice.paid', trial)), 'processed');
    expect(await customerOf(m, subscription.customer)).toMatchObject({ status: 'trial', first_conversion_at: null });
    const paid = paidInvoice({
      id: fresh('in'),
      subscription: subscription.id,
      reason: 'subscription_cycle',
      paidAt: nowSeconds() - 30,
    });
    await expectOutcome(send(event('invoice.paid', paid)), 'processed');
    expect(await conversionOf(m, paid.id)).toMatchObject({ kind: 'initial', amount: 10, commission_amount: 3 });
    expect((await customerOf(m, subscription.customer)).status).toBe('active');
  });
});
