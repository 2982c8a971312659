import { Webhook } from 'standardwebhooks';
import { BadRequestError } from '../http/errors.js';
import {
  cancelOf,
  currencyCode,
  dateFrom,
  header,
  isoMajor,
  minor,
  obj,
  referralFrom,
  runningTotalRefund,
  str,
  type Json,
  type ProviderAdapter,
  type VerifiedEvent,
  type WebhookAction,
} from './types.js';

/**
 * Polar signs with Standard Webhooks. Its SDK's validateEvent base64-encodes the secret string
 * before handing it to Standard Webhooks (which base64-decodes it), so the HMAC key is the UTF-8
 * bytes of the secret exactly as Polar's dashboard shows it. Keyed the same way here.
 */
export const polarWebhook = (secret: string) => new Webhook(Buffer.from(secret, 'utf8').toString('base64'));

const major = isoMajor;

function orderPaid(order: Json): WebhookAction[] {
  const id = str(order.id);
  const currency = currencyCode(order.currency);
  // net_amount: after discounts, before tax. Older payloads only had amount + tax_amount.
  const net =
    minor(order.net_amount) ?? (minor(order.total_amount) ?? minor(order.amount))?.minus(minor(order.tax_amount) ?? 0);
  if (!id || !currency || !net) return [];
  const customer = obj(order.customer);
  return [
    {
      kind: 'payment',
      external_id: id,
      amount: major(net, currency),
      currency,
      customer_id: str(order.customer_id) ?? str(customer?.id),
      referral: referralFrom(order.metadata, obj(order.subscription)?.metadata, obj(order.checkout)?.metadata),
      occurred_at: dateFrom(order.created_at),
      email: str(customer?.email),
      // The order's discount, as Polar sends it, carries the code the customer typed.
      coupon: str(obj(order.discount)?.code),
    },
  ];
}

function orderRefunded(order: Json): WebhookAction[] {
  const id = str(order.id);
  if (!id) return [];
  // refunded_amount is the order's cumulative refunded total (tax apart).
  return runningTotalRefund([id], minor(order.refunded_amount), minor(order.net_amount), order.status === 'refunded');
}

export const polarAdapter: ProviderAdapter = {
  provider: 'polar',
  verify(rawBody, headers, secret): VerifiedEvent {
    const id = header(headers, 'webhook-id');
    const timestamp = header(headers, 'webhook-timestamp');
    const signature = header(headers, 'webhook-signature');
    if (!id || !timestamp || !signature)
      throw new BadRequestError('Missing webhook-id, webhook-timestamp or webhook-signature header');
    let event: unknown;
    try {
      event = polarWebhook(secret).verify(rawBody.toString('utf8'), {
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': signature,
      });
    } catch (err) {
      throw new BadRequestError(`Invalid webhook-signature: ${(err as Error).message}`);
    }
    const payload = obj(event);
    const type = str(payload?.type);
    if (!payload || !type) throw new BadRequestError('Malformed Polar event');
    return { id, type, payload };
  },
  map(event) {
    const data = obj(event.payload.data);
    if (!data) return [];
    switch (event.type) {
      case 'order.paid':
        return orderPaid(data);
      case 'order.refunded':
        return orderRefunded(data);
      case 'subscription.canceled':
      case 'subscription.revoked':
        return cancelOf(str(data.customer_id) ?? str(obj(data.customer)?.id));
      default:
        return [];
    }
  },
};
