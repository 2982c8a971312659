import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/api.js';
import { merchantWithSecret, nowSeconds, snapshot, type Merchant } from './helpers.js';
import { chargebeeSigned, paddleSigned, polarSigned, stripeSigned, type Signed } from './signers.js';

/**
 * Webhooks write through the same services as the API, so they must pass the same input rules
 * (contract schemas, no NUL characters). A signed event whose data breaks them is answered 200
 * `ignored` with the reason, and remembered: it will never become valid, and a 5xx or 4xx would
 * only make the provider retry it for days.
 */

const SECRETS = {
  stripe: 'whsec_input_rules_3b7c1d9e2f4a6b8c',
  paddle: 'pdl_ntfset_input_rules_9Xk2Lm4Np6Qr8St',
  polar: 'polar_whs_input_rules_5Tz7Wq1Ey3Ru9Io',
  chargebee: 'cb-input-rules-password-4Kd8',
};
const YEAR_SECONDS = 365 * 24 * 3600;
const uid = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '')}`;

const stripeEvent = (type: string, object: Record<string, unknown>, id = uid('evt')) =>
  JSON.stringify({
    id,
    object: 'event',
    api_version: '2025-03-31.basil',
    created: nowSeconds(),
    data: { object },
    type,
  });

function stripeInvoice(o: { id?: string; customer: string; amountPaid: number; ref?: string }) {
  return {
    id: o.id ?? uid('in'),
    object: 'invoice',
    billing_reason: 'subscription_create',
    currency: 'usd',
    customer: o.customer,
    status: 'paid',
    amount_paid: o.amountPaid,
    total: o.amountPaid,
    total_taxes: [],
    parent: {
      type: 'subscription_details',
      subscription_details: { metadata: o.ref ? { ref_svc_affiliate: o.ref } : null, subscription: uid('sub') },
    },
    status_transitions: { paid_at: nowSeconds() - 5 },
    created: nowSeconds() - 10,
  };
}

/** Delivers, expects 200 `ignored` whose detail matches `reason`, and the same event again a duplicate. */
async function expectIgnored(delivery: Signed, reason: RegExp) {
  const res = await delivery.send();
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data.webhook.outcome).toBe('ignored');
  expect(res.body.data.webhook.detail).toMatch(reason);
  return res;
}

describe('Webhooks apply the API input rules', () => {
  const m = {} as Record<keyof typeof SECRETS, Merchant>;
  beforeAll(async () => {
    for (const provider of Object.keys(SECRETS) as (keyof typeof SECRETS)[])
      m[provider] = await merchantWithSecret(provider, SECRETS[provider]);
  });

  it('a signed charge of 1e22 (minor units) is ignored with the reason, stores nothing, and stays ignored on redelivery', async () => {
    const customer = uid('cus');
    const before = await snapshot(m.stripe, [customer]);
    const huge = stripeSigned(
      m.stripe.id,
      SECRETS.stripe,
      stripeEvent('invoice.paid', stripeInvoice({ customer, amountPaid: 1e22, ref: m.stripe.slug })),
    );
    await expectIgnored(huge, /amount: Number must be less than or equal to 1000000000000/);
    expect((await huge.send()).body.data.webhook.outcome).toBe('duplicate');
    expect(await snapshot(m.stripe, [customer])).toEqual(before);

    // The same event within the API's range is recorded: the refusal is about the amount only.
    const fine = stripeSigned(
      m.stripe.id,
      SECRETS.stripe,
      stripeEvent('invoice.paid', stripeInvoice({ customer, amountPaid: 1e14, ref: m.stripe.slug })),
    );
    expect((await fine.send()).body.data.webhook.outcome).toBe('processed');
  });

  it('an amount string past the API maximum (Paddle sends strings) is ignored, nothing stored', async () => {
    const customer = uid('ctm');
    const before = await snapshot(m.paddle, [customer]);
    const total = `1${'0'.repeat(22)}`;
    const body = JSON.stringify({
      event_id: uid('evt'),
      event_type: 'transaction.completed',
      occurred_at: new Date().toISOString(),
      data: {
        id: uid('txn'),
        status: 'completed',
        customer_id: customer,
        currency_code: 'USD',
        custom_data: { ref_svc_affiliate: m.paddle.slug },
        details: { totals: { total, tax: '0' } },
        billed_at: new Date().toISOString(),
      },
    });
    await expectIgnored(
      paddleSigned(m.paddle.id, SECRETS.paddle, body),
      /amount: Number must be less than or equal to/,
    );
    expect(await snapshot(m.paddle, [customer])).toEqual(before);
  });

  it('NUL in a customer id is ignored (no 500), and no customer or conversion is stored', async () => {
    const customer = `cus_${uid('a')}\u0000x`;
    const before = await snapshot(m.stripe);
    await expectIgnored(
      stripeSigned(
        m.stripe.id,
        SECRETS.stripe,
        stripeEvent('invoice.paid', stripeInvoice({ customer, amountPaid: 4999, ref: m.stripe.slug })),
      ),
      /customer_id: NUL characters \(U\+0000\) are not allowed/,
    );
    // Without a referral the payment looks its customer up: that query must never see the NUL either.
    await expectIgnored(
      stripeSigned(
        m.stripe.id,
        SECRETS.stripe,
        stripeEvent('invoice.paid', stripeInvoice({ customer, amountPaid: 4999 })),
      ),
      /customer_id: NUL/,
    );
    await expectIgnored(
      stripeSigned(
        m.stripe.id,
        SECRETS.stripe,
        stripeEvent('customer.subscription.deleted', { id: uid('sub'), object: 'subscription', customer }),
      ),
      /customer_id: NUL/,
    );
    expect(await snapshot(m.stripe)).toEqual(before);
  });

  it('NUL in an external id, a refund target or an event id is ignored (no 500), nothing stored', async () => {
    const before = await snapshot(m.polar);
    const order = {
      id: `${randomUUID()}\u0000`,
      status: 'paid',
      net_amount: 1000,
      tax_amount: 0,
      currency: 'usd',
      customer_id: randomUUID(),
      metadata: { ref_svc_affiliate: m.polar.slug },
      created_at: new Date().toISOString(),
    };
    await expectIgnored(
      polarSigned(m.polar.id, SECRETS.polar, JSON.stringify({ type: 'order.paid', data: order })),
      /external_id: NUL/,
    );
    await expectIgnored(
      polarSigned(
        m.polar.id,
        SECRETS.polar,
        JSON.stringify({ type: 'order.refunded', data: { ...order, status: 'refunded', refunded_amount: 1000 } }),
      ),
      /NUL/,
    );
    expect(await snapshot(m.polar)).toEqual(before);

    const charge = {
      id: `ch_${uid('x')}\u0000`,
      object: 'charge',
      amount: 1000,
      amount_refunded: 1000,
      refunded: true,
      currency: 'usd',
      payment_intent: `pi_\u0000${uid('x')}`,
    };
    await expectIgnored(stripeSigned(m.stripe.id, SECRETS.stripe, stripeEvent('charge.refunded', charge)), /NUL/);

    // An event id with NUL cannot even be remembered: ignored, and ignored again when redelivered.
    const chargebeeBefore = await snapshot(m.chargebee);
    const event = JSON.stringify({
      id: `ev_\u0000${uid('x')}`,
      occurred_at: nowSeconds(),
      event_type: 'payment_succeeded',
      content: {
        invoice: { id: uid('inv'), total: 1000, amount_paid: 1000, currency_code: 'USD' },
        customer: { id: uid('c'), cf_ref_svc_affiliate: m.chargebee.slug },
      },
    });
    const delivery = chargebeeSigned(m.chargebee.id, SECRETS.chargebee, event);
    await expectIgnored(delivery, /event id: NUL/);
    await expectIgnored(delivery, /event id: NUL/);
    expect(await snapshot(m.chargebee)).toEqual(chargebeeBefore);
  });

  it('lone UTF-16 surrogates in a charge id, a customer id, a refund target or an event id: ignored with the reason, two such ids never merge', async () => {
    // JSON.stringify writes "\ud800" as its escape: a valid, signed body whose parsed id is ill-formed.
    const lone = /ill-formed Unicode \(a lone UTF-16 surrogate\) is not allowed/;
    const before = await snapshot(m.stripe);
    const base = uid('in');
    for (const id of [`${base}\ud800`, `${base}\udbff`]) {
      await expectIgnored(
        stripeSigned(
          m.stripe.id,
          SECRETS.stripe,
          stripeEvent(
            'invoice.paid',
            stripeInvoice({ id, customer: uid('cus'), amountPaid: 4999, ref: m.stripe.slug }),
          ),
        ),
        new RegExp(`external_id: ${lone.source}`),
      );
    }
    const customer = `${uid('cus')}\udc00`;
    await expectIgnored(
      stripeSigned(
        m.stripe.id,
        SECRETS.stripe,
        stripeEvent('invoice.paid', stripeInvoice({ customer, amountPaid: 4999, ref: m.stripe.slug })),
      ),
      new RegExp(`customer_id: ${lone.source}`),
    );
    await expectIgnored(
      stripeSigned(
        m.stripe.id,
        SECRETS.stripe,
        stripeEvent('customer.subscription.deleted', { id: uid('sub'), object: 'subscription', customer }),
      ),
      new RegExp(`customer_id: ${lone.source}`),
    );
    const charge = {
      id: `ch_${uid('x')}\ud800`,
      object: 'charge',
      amount: 1000,
      amount_refunded: 1000,
      refunded: true,
      currency: 'usd',
      payment_intent: `pi_${uid('x')}\udbff`,
    };
    await expectIgnored(stripeSigned(m.stripe.id, SECRETS.stripe, stripeEvent('charge.refunded', charge)), lone);
    expect(await snapshot(m.stripe)).toEqual(before);

    const chargebeeBefore = await snapshot(m.chargebee);
    const event = JSON.stringify({
      id: `ev_${uid('x')}\ud800`,
      occurred_at: nowSeconds(),
      event_type: 'payment_succeeded',
      content: {
        invoice: { id: uid('inv'), total: 1000, amount_paid: 1000, currency_code: 'USD' },
        customer: { id: uid('c'), cf_ref_svc_affiliate: m.chargebee.slug },
      },
    });
    const delivery = chargebeeSigned(m.chargebee.id, SECRETS.chargebee, event);
    const first = await expectIgnored(delivery, new RegExp(`event id: ${lone.source}`));
    // The receipt repeats the id it could not keep, as text: U+FFFD for the lone surrogate.
    expect(first.body.data.webhook.event_id).toMatch(/^ev_.*\ufffd$/);
    await expectIgnored(delivery, new RegExp(`event id: ${lone.source}`));
    expect(await snapshot(m.chargebee)).toEqual(chargebeeBefore);
  });

  it('ids longer than the API accepts and timestamps out of range are ignored, not a 500', async () => {
    const before = await snapshot(m.chargebee);
    const content = (invoice: Record<string, unknown>, transaction: Record<string, unknown> = {}) => ({
      invoice: { id: uid('inv'), total: 1000, amount_paid: 1000, currency_code: 'USD', ...invoice },
      transaction: { id: uid('txn'), amount: 1000, currency_code: 'USD', date: nowSeconds(), ...transaction },
      customer: { id: uid('c'), cf_ref_svc_affiliate: m.chargebee.slug },
    });
    const event = (c: Record<string, unknown>) =>
      JSON.stringify({ id: uid('ev'), occurred_at: nowSeconds(), event_type: 'payment_succeeded', content: c });
    await expectIgnored(
      chargebeeSigned(m.chargebee.id, SECRETS.chargebee, event(content({ id: 'x'.repeat(256) }))),
      /external_id: String must contain at most 255/,
    );
    await expectIgnored(
      chargebeeSigned(m.chargebee.id, SECRETS.chargebee, event(content({}, { date: 1e20 }))),
      /occurred_at: Invalid datetime/,
    );
    await expectIgnored(
      chargebeeSigned(m.chargebee.id, SECRETS.chargebee, event(content({}, { date: -1e11 }))),
      /occurred_at: Invalid datetime/,
    );
    await expectIgnored(
      chargebeeSigned(
        m.chargebee.id,
        SECRETS.chargebee,
        event(content({ currency_code: 'US' }, { currency_code: 'US' })),
      ),
      /payment carries no amount or currency|currency/,
    );
    expect(await snapshot(m.chargebee)).toEqual(before);
  });
});

describe('Signature timestamps ahead of our clock are refused like stale ones', () => {
  const m = {} as Record<'stripe' | 'paddle' | 'polar', Merchant>;
  beforeAll(async () => {
    for (const provider of ['stripe', 'paddle', 'polar'] as const)
      m[provider] = await merchantWithSecret(provider, SECRETS[provider]);
  });

  it('Stripe: a timestamp a year (or 330 s) ahead answers 400 and records nothing; 200 s ahead is within the tolerance', async () => {
    const before = await snapshot(m.stripe);
    const event = () =>
      stripeEvent('invoice.paid', stripeInvoice({ customer: uid('cus'), amountPaid: 4999, ref: m.stripe.slug }));
    expectError(
      await stripeSigned(m.stripe.id, SECRETS.stripe, event(), nowSeconds() + YEAR_SECONDS).send(),
      400,
      /Invalid Stripe-Signature.*tolerance/i,
    );
    expectError(
      await stripeSigned(m.stripe.id, SECRETS.stripe, event(), nowSeconds() + 330).send(),
      400,
      /Invalid Stripe-Signature.*tolerance/i,
    );
    expect(await snapshot(m.stripe)).toEqual(before);
    const skewed = await stripeSigned(m.stripe.id, SECRETS.stripe, event(), nowSeconds() + 200).send();
    expect(skewed.status, JSON.stringify(skewed.body)).toBe(200);
    expect(skewed.body.data.webhook.outcome).toBe('processed');
  });

  it('Paddle: ts a year ahead answers 400', async () => {
    const body = JSON.stringify({
      event_id: uid('evt'),
      event_type: 'transaction.completed',
      data: {
        id: uid('txn'),
        customer_id: uid('ctm'),
        currency_code: 'USD',
        custom_data: { ref_svc_affiliate: m.paddle.slug },
        details: { totals: { total: '1000', tax: '0' } },
      },
    });
    expectError(
      await paddleSigned(m.paddle.id, SECRETS.paddle, body, nowSeconds() + YEAR_SECONDS).send(),
      400,
      /tolerance/,
    );
  });

  it('Polar (Standard Webhooks): webhook-timestamp a year ahead answers 400', async () => {
    const body = JSON.stringify({
      type: 'order.paid',
      data: {
        id: randomUUID(),
        net_amount: 1000,
        currency: 'usd',
        customer_id: randomUUID(),
        metadata: { ref_svc_affiliate: m.polar.slug },
      },
    });
    expectError(
      await polarSigned(m.polar.id, SECRETS.polar, body, new Date(Date.now() + YEAR_SECONDS * 1000)).send(),
      400,
      /Invalid webhook-signature/,
    );
  });
});
