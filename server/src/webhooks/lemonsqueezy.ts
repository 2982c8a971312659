import { createHash } from 'node:crypto';
import { BadRequestError } from '../http/errors.js';
import { hexDigestEquals, hmacSha256Hex } from './hmac.js';
import {
  cancelOf,
  currencyCode,
  dateFrom,
  header,
  isoMajor,
  minor,
  obj,
  parseJsonObject,
  referralFrom,
  runningTotalRefund,
  str,
  type Json,
  type ProviderAdapter,
  type VerifiedEvent,
  type WebhookAction,
} from './types.js';

/** Lemon Squeezy ids are small integers shared by nothing else: prefixed to stay unique as external ids. */
export const lemonOrderExternalId = (id: string) => `lemonsqueezy:order:${id}`;
export const lemonInvoiceExternalId = (id: string) => `lemonsqueezy:subscription-invoice:${id}`;

const major = isoMajor;

function payment(externalId: string, attributes: Json, meta: Json): WebhookAction[] {
  const currency = currencyCode(attributes.currency);
  const total = minor(attributes.total);
  if (!currency || !total || attributes.status !== 'paid') return [];
  return [
    {
      kind: 'payment',
      external_id: externalId,
      amount: major(total.minus(minor(attributes.tax) ?? 0), currency),
      currency,
      customer_id: str(attributes.customer_id),
      referral: referralFrom(meta.custom_data),
      occurred_at: dateFrom(attributes.created_at),
      email: str(attributes.user_email),
    },
  ];
}

function refund(externalId: string, attributes: Json): WebhookAction[] {
  // refunded_amount is cumulative per order or invoice: reported as the running total.
  return runningTotalRefund(
    [externalId],
    minor(attributes.refunded_amount),
    minor(attributes.total),
    attributes.status === 'refunded',
  );
}

export const lemonSqueezyAdapter: ProviderAdapter = {
  provider: 'lemonsqueezy',
  verify(rawBody, headers, secret): VerifiedEvent {
    const signature = header(headers, 'x-signature');
    if (!signature) throw new BadRequestError('Missing X-Signature header');
    if (!hexDigestEquals(hmacSha256Hex(secret, rawBody), signature.trim())) {
      throw new BadRequestError('Invalid X-Signature: it does not match the payload');
    }
    const payload = parseJsonObject(rawBody);
    const type = str(obj(payload?.meta)?.event_name) ?? header(headers, 'x-event-name');
    if (!payload || !type) throw new BadRequestError('Malformed Lemon Squeezy event');
    // Lemon Squeezy sends no event id and no timestamp: a redelivery repeats the same bytes.
    return { id: `sha256:${createHash('sha256').update(rawBody).digest('hex')}`, type, payload };
  },
  map(event) {
    const data = obj(event.payload.data);
    const meta = obj(event.payload.meta) ?? {};
    const id = str(data?.id);
    const attributes = obj(data?.attributes);
    if (!id || !attributes) return [];
    switch (event.type) {
      case 'order_created':
        return payment(lemonOrderExternalId(id), attributes, meta);
      case 'subscription_payment_success':
        // The first invoice of a subscription is the same charge as its order_created.
        if (attributes.billing_reason === 'initial') return [];
        return payment(lemonInvoiceExternalId(id), attributes, meta);
      case 'subscription_cancelled':
      case 'subscription_expired':
        return cancelOf(str(attributes.customer_id));
      case 'order_refunded':
        return refund(lemonOrderExternalId(id), attributes);
      case 'subscription_payment_refunded':
        return refund(lemonInvoiceExternalId(id), attributes);
      default:
        return [];
    }
  },
};
