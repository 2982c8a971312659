import Stripe from 'stripe';
import { Decimal } from 'decimal.js';
import { BadRequestError } from '../http/errors.js';
import {
  TIMESTAMP_TOLERANCE_SECONDS,
  cancelOf,
  currencyCode,
  dateFrom,
  header,
  idOf,
  minor,
  netOfTax,
  obj,
  referralFrom,
  runningTotalRefund,
  str,
  toMajor,
  type Json,
  type ProviderAdapter,
  type VerifiedEvent,
  type WebhookAction,
} from './types.js';

/** Stripe's own lists (docs.stripe.com/currencies): amounts are in these units, whatever ISO says. */
const ZERO_DECIMAL = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);
export const stripeExponent = (currency: string): number =>
  ZERO_DECIMAL.has(currency) ? 0 : THREE_DECIMAL.has(currency) ? 3 : 2;

const major = (amountMinor: Decimal, currency: string) =>
  toMajor(Decimal.max(amountMinor, 0), stripeExponent(currency));

function invoiceTax(invoice: Json): Decimal {
  // total_excluding_tax (every API version since 2022) excludes inclusive and exclusive taxes alike.
  const total = minor(invoice.total);
  const excludingTax = minor(invoice.total_excluding_tax);
  if (total && excludingTax) return Decimal.max(total.minus(excludingTax), 0);
  // Otherwise: newer API versions list taxes in total_taxes; older ones had a single `tax`.
  const totalTaxes = invoice.total_taxes;
  if (Array.isArray(totalTaxes))
    return totalTaxes.reduce<Decimal>((sum, t) => sum.plus(minor(obj(t)?.amount) ?? 0), new Decimal(0));
  return minor(invoice.tax) ?? new Decimal(0);
}

/**
 * The session's charge, tax excluded, in the merchant's currency. Sessions created before
 * 2025-03-31 with Adaptive Pricing state amount_total, total_details and currency in the currency
 * the customer chose, and the merchant's own under currency_conversion (source_currency,
 * amount_total: tax included); tax is then taken off in the same proportion. Later sessions (and
 * API versions from 2025-09-30, which dropped currency_conversion) keep the merchant's currency.
 */
function sessionCharge(session: Json): { net: Decimal; currency: string } | undefined {
  const presented = minor(session.amount_total);
  const presentedCurrency = currencyCode(session.currency);
  if (!presented || !presentedCurrency) return undefined;
  const tax = minor(obj(session.total_details)?.amount_tax) ?? new Decimal(0);
  const conversion = obj(session.currency_conversion);
  const sourceTotal = minor(conversion?.amount_total);
  const sourceCurrency = currencyCode(conversion?.source_currency);
  if (sourceTotal && sourceCurrency) {
    const net = presented.isZero()
      ? new Decimal(0)
      : sourceTotal.times(presented.minus(tax)).dividedBy(presented).toDecimalPlaces(0, Decimal.ROUND_HALF_UP);
    return { net, currency: sourceCurrency };
  }
  return { net: netOfTax(presented, presented, tax), currency: presentedCurrency };
}

/**
 * The promotion code of a session's or invoice's `discounts`: each entry names its promotion code
 * by id (promo_…), or carries it expanded with its `code`; a bare discount id (di_…) names none.
 */
function stripePromotionCode(discounts: unknown): string | undefined {
  if (!Array.isArray(discounts)) return undefined;
  for (const entry of discounts) {
    const promotion = obj(entry)?.promotion_code;
    const code = str(obj(promotion)?.code) ?? str(promotion);
    if (code) return code;
  }
  return undefined;
}

function checkoutCompleted(session: Json, type: string): WebhookAction[] {
  // Delayed payment methods complete the session unpaid; async_payment_succeeded follows.
  if (type === 'checkout.session.completed' && session.payment_status === 'unpaid') return [];
  const charge = sessionCharge(session);
  if (!charge) return [];
  const { net, currency } = charge;
  const customerId = idOf(session.customer);
  const referral = referralFrom(session.metadata);
  let externalId: string | undefined;
  const references: WebhookAction[] = [];
  if (session.mode === 'subscription') {
    // The session's invoice is also announced by invoice.paid (billing_reason subscription_create):
    // both use the invoice id, so the charge is counted once, whichever arrives first.
    externalId = idOf(session.invoice);
    if (!externalId) {
      // No invoice on the session: invoice.paid carries the charge; here only the referral is tied to the customer.
      return referral && customerId
        ? [
            {
              kind: 'payment',
              external_id: `stripe:checkout:${str(session.id)}`,
              amount: '0',
              currency,
              customer_id: customerId,
              referral,
            },
          ]
        : [];
    }
  } else if (session.mode === 'payment') {
    // With invoice_creation enabled the payment also gets a paid invoice, announced by its own
    // invoice.paid: both name the invoice, so the charge counts once. Refunds name the payment
    // intent, linked to the invoice here.
    const paymentIntent = idOf(session.payment_intent);
    const invoiceId = idOf(session.invoice);
    externalId = invoiceId ?? paymentIntent ?? str(session.id);
    if (invoiceId && paymentIntent)
      references.push({ kind: 'reference', reference: paymentIntent, external_id: invoiceId });
  } else {
    return [];
  }
  if (!externalId) return [];
  return [
    {
      kind: 'payment',
      external_id: externalId,
      amount: major(net, currency),
      currency,
      customer_id: customerId,
      referral,
      occurred_at: dateFrom(session.created),
      email: str(obj(session.customer_details)?.email),
      coupon: stripePromotionCode(session.discounts),
    },
    ...references,
  ];
}

function invoicePaid(invoice: Json): WebhookAction[] {
  const invoiceId = str(invoice.id);
  const currency = currencyCode(invoice.currency);
  const paid = minor(invoice.amount_paid);
  if (!invoiceId || !currency || !paid) return [];
  const parent = obj(invoice.parent);
  // Newer API versions moved subscription details under parent; read both.
  const subscriptionDetails = obj(parent?.subscription_details) ?? obj(invoice.subscription_details);
  const actions: WebhookAction[] = [
    {
      kind: 'payment',
      external_id: invoiceId,
      // amount_paid is what the customer paid now: less than total when the customer's balance or a
      // credit note paid part of it.
      amount: major(netOfTax(paid, minor(invoice.total), invoiceTax(invoice)), currency),
      currency,
      customer_id: idOf(invoice.customer),
      referral: referralFrom(subscriptionDetails?.metadata, invoice.metadata),
      occurred_at: dateFrom(obj(invoice.status_transitions)?.paid_at) ?? dateFrom(invoice.created),
      email: str(invoice.customer_email),
      coupon: stripePromotionCode(invoice.discounts),
    },
  ];
  // Older API versions name the invoice's payment: a refund of that charge finds this conversion.
  for (const reference of [idOf(invoice.payment_intent), idOf(invoice.charge)]) {
    if (reference) actions.push({ kind: 'reference', reference, external_id: invoiceId });
  }
  return actions;
}

/** Newer API versions link an invoice to its payment intent only through invoice payments. */
function invoicePaymentPaid(invoicePayment: Json): WebhookAction[] {
  const invoiceId = idOf(invoicePayment.invoice);
  if (!invoiceId) return [];
  const payment = obj(invoicePayment.payment);
  return [idOf(payment?.payment_intent), idOf(payment?.charge)]
    .filter((r): r is string => r !== undefined)
    .map((reference) => ({ kind: 'reference', reference, external_id: invoiceId }));
}

function chargeRefunded(charge: Json): WebhookAction[] {
  const chargeId = str(charge.id);
  if (!chargeId) return [];
  const candidates = [idOf(charge.invoice), idOf(charge.payment_intent), chargeId].filter(
    (c): c is string => c !== undefined,
  );
  // A partly captured charge refunds out of what was captured.
  const captured = minor(charge.amount_captured);
  const amount = captured && captured.greaterThan(0) ? captured : minor(charge.amount);
  // amount_refunded is the charge's cumulative total: reported as the running total.
  return runningTotalRefund(candidates, minor(charge.amount_refunded), amount, charge.refunded === true);
}

export const stripeAdapter: ProviderAdapter = {
  provider: 'stripe',
  verify(rawBody, headers, secret, now = new Date()): VerifiedEvent {
    const signature = header(headers, 'stripe-signature');
    if (!signature) throw new BadRequestError('Missing Stripe-Signature header');
    let event: unknown;
    try {
      // receivedAt is in milliseconds (stripe-node divides it by 1000).
      event = Stripe.webhooks.constructEvent(
        rawBody,
        signature,
        secret,
        TIMESTAMP_TOLERANCE_SECONDS,
        undefined,
        now.getTime(),
      );
    } catch (err) {
      throw new BadRequestError(`Invalid Stripe-Signature: ${(err as Error).message}`);
    }
    // stripe-node refuses only timestamps too far in the past. One far ahead is refused as well: a
    // signature made for a future time would otherwise stay replayable until that time passes.
    const timestamp = Number(/(?:^|,)\s*t=(\d+)/.exec(signature)?.[1]);
    if (timestamp - Math.floor(now.getTime() / 1000) > TIMESTAMP_TOLERANCE_SECONDS) {
      throw new BadRequestError('Invalid Stripe-Signature: Timestamp outside the tolerance zone (ahead of our clock)');
    }
    const payload = obj(event);
    const id = str(payload?.id);
    const type = str(payload?.type);
    if (!payload || !id || !type) throw new BadRequestError('Malformed Stripe event');
    return { id, type, payload };
  },
  map(event) {
    const object = obj(obj(event.payload.data)?.object);
    if (!object) return [];
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return checkoutCompleted(object, event.type);
      case 'invoice.paid':
      case 'invoice.payment_succeeded':
        return invoicePaid(object);
      case 'invoice_payment.paid':
        return invoicePaymentPaid(object);
      case 'customer.subscription.deleted':
        return cancelOf(idOf(object.customer));
      case 'charge.refunded':
        return chargeRefunded(object);
      default:
        return [];
    }
  },
};
