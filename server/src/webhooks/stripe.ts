import Stripe from 'stripe';
import { Decimal } from 'decimal.js';
import { BadRequestError } from '../http/errors.js';
import {
  TIMESTAMP_TOLERANCE_SECONDS,
  currencyCode,
  dateFrom,
  fractionOf,
  header,
  idOf,
  minor,
  obj,
  referralFrom,
  str,
  toMajor,
  type Json,
  type ProviderAdapter,
  type VerifiedEvent,
  type WebhookAction,
} from './types.js';

/** Stripe's own lists (docs.stripe.com/currencies): amounts are in these units, whatever ISO says. */
const ZERO_DECIMAL = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);
export const stripeExponent = (currency: string): number => (ZERO_DECIMAL.has(currency) ? 0 : THREE_DECIMAL.has(currency) ? 3 : 2);

const major = (amountMinor: Decimal, currency: string) => toMajor(Decimal.max(amountMinor, 0), stripeExponent(currency));

function invoiceTax(invoice: Json): Decimal {
  // Newer API versions list taxes in total_taxes; older ones had a single `tax`.
  const totalTaxes = invoice.total_taxes;
  if (Array.isArray(totalTaxes)) return totalTaxes.reduce<Decimal>((sum, t) => sum.plus(minor(obj(t)?.amount) ?? 0), new Decimal(0));
  return minor(invoice.tax) ?? new Decimal(0);
}

function checkoutCompleted(session: Json, type: string): WebhookAction[] {
  // Delayed payment methods complete the session unpaid; async_payment_succeeded follows.
  if (type === 'checkout.session.completed' && session.payment_status === 'unpaid') return [];
  const currency = currencyCode(session.currency);
  const total = minor(session.amount_total);
  if (!currency || !total) return [];
  const tax = minor(obj(session.total_details)?.amount_tax) ?? new Decimal(0);
  const customerId = idOf(session.customer);
  const referral = referralFrom(session.metadata);
  let externalId: string | undefined;
  if (session.mode === 'subscription') {
    // The session's invoice is also announced by invoice.paid (billing_reason subscription_create):
    // both use the invoice id, so the charge is counted once, whichever arrives first.
    externalId = idOf(session.invoice);
    if (!externalId) {
      // No invoice on the session: invoice.paid carries the charge; here only the referral is tied to the customer.
      return referral && customerId
        ? [{ kind: 'payment', external_id: `stripe:checkout:${str(session.id)}`, amount: '0', currency, customer_id: customerId, referral }]
        : [];
    }
  } else if (session.mode === 'payment') {
    externalId = idOf(session.payment_intent) ?? str(session.id);
  } else {
    return [];
  }
  if (!externalId) return [];
  return [
    {
      kind: 'payment',
      external_id: externalId,
      amount: major(total.minus(tax), currency),
      currency,
      customer_id: customerId,
      referral,
      occurred_at: dateFrom(session.created),
      email: str(obj(session.customer_details)?.email),
    },
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
      amount: major(paid.minus(invoiceTax(invoice)), currency),
      currency,
      customer_id: idOf(invoice.customer),
      referral: referralFrom(subscriptionDetails?.metadata, invoice.metadata),
      occurred_at: dateFrom(obj(invoice.status_transitions)?.paid_at) ?? dateFrom(invoice.created),
      email: str(invoice.customer_email),
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
  const candidates = [idOf(charge.invoice), idOf(charge.payment_intent), chargeId].filter((c): c is string => c !== undefined);
  const amount = minor(charge.amount);
  const refunded = minor(charge.amount_refunded);
  const fraction = fractionOf(refunded, amount);
  const full = charge.refunded === true || (refunded !== undefined && amount !== undefined && refunded.greaterThanOrEqualTo(amount));
  if (!full && fraction === undefined) return [];
  // amount_refunded is the charge's cumulative total: one key per charge keeps the latest total.
  return [{ kind: 'refund', candidates, refund_key: `stripe:charge:${chargeId}`, refund: full ? { full: true } : { fraction } as { fraction: string } }];
}

export const stripeAdapter: ProviderAdapter = {
  provider: 'stripe',
  verify(rawBody, headers, secret, now = new Date()): VerifiedEvent {
    const signature = header(headers, 'stripe-signature');
    if (!signature) throw new BadRequestError('Missing Stripe-Signature header');
    let event: unknown;
    try {
      // receivedAt is in milliseconds (stripe-node divides it by 1000).
      event = Stripe.webhooks.constructEvent(rawBody, signature, secret, TIMESTAMP_TOLERANCE_SECONDS, undefined, now.getTime());
    } catch (err) {
      throw new BadRequestError(`Invalid Stripe-Signature: ${(err as Error).message}`);
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
      case 'customer.subscription.deleted': {
        const customerId = idOf(object.customer);
        return customerId ? [{ kind: 'cancel', customer_id: customerId }] : [];
      }
      case 'charge.refunded':
        return chargeRefunded(object);
      default:
        return [];
    }
  },
};


