import { Decimal } from 'decimal.js';
import { BadRequestError } from '../http/errors.js';
import { hexDigestEquals, hmacSha256Hex } from './hmac.js';
import {
  TIMESTAMP_TOLERANCE_SECONDS,
  cancelOf,
  currencyCode,
  dateFrom,
  header,
  isoMajor,
  minor,
  netOfTax,
  obj,
  parseJsonObject,
  referralFrom,
  str,
  type Json,
  type ProviderAdapter,
  type VerifiedEvent,
  type WebhookAction,
} from './types.js';

/**
 * Paddle Billing: `Paddle-Signature: ts=<unix>;h1=<hex>[;h1=<hex>]`, HMAC-SHA256 of `${ts}:${rawBody}`
 * keyed with the notification destination's secret. Several h1 appear while a secret rotates.
 */
export function verifyPaddleSignature(
  rawBody: Buffer,
  signatureHeader: string | undefined,
  secret: string,
  now: Date,
): void {
  if (!signatureHeader) throw new BadRequestError('Missing Paddle-Signature header');
  let ts: string | undefined;
  const h1: string[] = [];
  for (const part of signatureHeader.split(';')) {
    const [key, ...rest] = part.split('=');
    const value = rest.join('=').trim();
    if (key?.trim() === 'ts') ts = value;
    else if (key?.trim() === 'h1' && value) h1.push(value);
  }
  if (!ts || !/^\d+$/.test(ts) || h1.length === 0)
    throw new BadRequestError('Invalid Paddle-Signature: expected ts=<unix>;h1=<hex>');
  const age = Math.floor(now.getTime() / 1000) - Number(ts);
  if (Math.abs(age) > TIMESTAMP_TOLERANCE_SECONDS)
    throw new BadRequestError('Invalid Paddle-Signature: timestamp outside the tolerance zone');
  const expected = hmacSha256Hex(secret, Buffer.concat([Buffer.from(`${ts}:`), rawBody]));
  if (!h1.some((candidate) => hexDigestEquals(expected, candidate))) {
    throw new BadRequestError('Invalid Paddle-Signature: no signature matches the payload');
  }
}

const major = isoMajor;

/** Paddle writes "0001-01-01T00:00:00Z" for a time not set yet (adjustment.created's updated_at): no time. */
const paddleDate = (value: unknown): Date | undefined =>
  typeof value === 'string' && value.startsWith('0001-01-01') ? undefined : dateFrom(value);

function transactionCompleted(t: Json): WebhookAction[] {
  const id = str(t.id);
  const currency = currencyCode(t.currency_code);
  const totals = obj(obj(t.details)?.totals);
  const total = minor(totals?.total);
  if (!id || !currency || !total) return [];
  const tax = minor(totals?.tax) ?? new Decimal(0);
  // grand_total is what was charged: total less a credit from an earlier change of plan.
  const charged = minor(totals?.grand_total) ?? total;
  return [
    {
      kind: 'payment',
      external_id: id,
      amount: major(netOfTax(charged, total, tax), currency),
      currency,
      customer_id: str(t.customer_id),
      referral: referralFrom(t.custom_data),
      occurred_at: paddleDate(t.billed_at) ?? paddleDate(t.updated_at) ?? paddleDate(t.created_at),
      // A transaction names its discount by id (dsc_…); its code only when the discount is included.
      coupon: str(obj(t.discount)?.code) ?? str(t.discount_id),
    },
  ];
}

function adjustment(a: Json): WebhookAction[] {
  const id = str(a.id);
  const transactionId = str(a.transaction_id);
  // Only approved refunds move money back; credits and pending or rejected refunds do not.
  if (!id || !transactionId || a.action !== 'refund' || a.status !== 'approved') return [];
  const totals = obj(a.totals);
  const currency = currencyCode(totals?.currency_code ?? a.currency_code);
  const subtotal = minor(totals?.subtotal);
  if (a.type !== 'full' && (!currency || !subtotal)) return [];
  return [
    {
      kind: 'refund',
      candidates: [transactionId],
      refund_id: id,
      refund: a.type === 'full' ? { full: true } : { amount: major(subtotal!, currency!) },
    },
  ];
}

export const paddleAdapter: ProviderAdapter = {
  provider: 'paddle',
  verify(rawBody, headers, secret, now = new Date()): VerifiedEvent {
    verifyPaddleSignature(rawBody, header(headers, 'paddle-signature'), secret, now);
    const payload = parseJsonObject(rawBody);
    const id = str(payload?.event_id) ?? str(payload?.notification_id);
    const type = str(payload?.event_type);
    if (!payload || !id || !type) throw new BadRequestError('Malformed Paddle event');
    return { id, type, payload };
  },
  map(event) {
    const data = obj(event.payload.data);
    if (!data) return [];
    switch (event.type) {
      case 'transaction.completed':
        return transactionCompleted(data);
      case 'subscription.canceled':
        return cancelOf(str(data.customer_id));
      case 'adjustment.created':
      case 'adjustment.updated':
        return adjustment(data);
      default:
        return [];
    }
  },
};
