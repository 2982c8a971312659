import { createHash, timingSafeEqual } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { BadRequestError } from '../http/errors.js';
import {
  REFERRAL_METADATA_KEY,
  arr,
  cancelOf,
  currencyCode,
  dateFrom,
  fractionOf,
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
  type RefundAction,
  type VerifiedEvent,
  type WebhookAction,
} from './types.js';

/** Chargebee custom fields are named `cf_<api name>`. */
const CUSTOM_FIELD = `cf_${REFERRAL_METADATA_KEY}`;

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Chargebee signs nothing; it calls the webhook URL with HTTP basic auth. The password is the
 * stored secret (any username), compared in constant time over digests of equal length.
 */
export function verifyBasicAuth(authorization: string | undefined, secret: string): void {
  const match = authorization?.match(/^basic\s+([A-Za-z0-9+/=]+)\s*$/i);
  if (!match) throw new BadRequestError('Missing basic auth credentials');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new BadRequestError('Invalid basic auth credentials');
  if (!timingSafeEqual(sha256(decoded.slice(colon + 1)), sha256(secret)))
    throw new BadRequestError('Invalid basic auth credentials');
}

const major = isoMajor;

function referral(content: Json): string | undefined {
  const subscription = obj(content.subscription);
  const customer = obj(content.customer);
  const customField = str(subscription?.[CUSTOM_FIELD]) ?? str(customer?.[CUSTOM_FIELD]);
  return customField ?? referralFrom(subscription?.meta_data, customer?.meta_data, obj(content.invoice)?.meta_data);
}

function paymentSucceeded(content: Json, occurredAt: Date | undefined): WebhookAction[] {
  const invoice = obj(content.invoice);
  const transaction = obj(content.transaction);
  const externalId = str(invoice?.id) ?? str(transaction?.id);
  const currency = currencyCode(invoice?.currency_code ?? transaction?.currency_code);
  // amount_paid is less than total when credits paid part of the invoice: tax comes off in proportion.
  const invoicePaid = minor(invoice?.amount_paid) ?? minor(invoice?.total);
  const paid = invoice
    ? invoicePaid && netOfTax(invoicePaid, minor(invoice.total), minor(invoice.tax) ?? new Decimal(0))
    : minor(transaction?.amount);
  if (!externalId || !currency || !paid) return [];
  return [
    {
      kind: 'payment',
      external_id: externalId,
      amount: major(paid, currency),
      currency,
      customer_id: str(obj(content.customer)?.id) ?? str(invoice?.customer_id) ?? str(transaction?.customer_id),
      referral: referral(content),
      occurred_at: dateFrom(transaction?.date) ?? dateFrom(invoice?.paid_at) ?? occurredAt,
      email: str(obj(content.customer)?.email),
      coupon: chargebeeCoupon(invoice?.discounts),
    },
  ];
}

/**
 * The coupon of an invoice's `discounts`: an entry of a coupon (entity_type `document_level_coupon`
 * or `item_level_coupon`) names the code the customer typed in `coupon_set_code` when it came from
 * a coupon set, else the coupon's id in `entity_id`.
 */
function chargebeeCoupon(discounts: unknown): string | undefined {
  if (!Array.isArray(discounts)) return undefined;
  for (const entry of discounts) {
    const discount = obj(entry);
    if (!str(discount?.entity_type)?.endsWith('_coupon')) continue;
    const code = str(discount?.coupon_set_code) ?? str(discount?.entity_id);
    if (code) return code;
  }
  return undefined;
}

function paymentRefunded(content: Json): WebhookAction[] {
  const transaction = obj(content.transaction);
  const transactionId = str(transaction?.id);
  if (!transactionId) return [];
  const invoice = obj(content.invoice);
  const creditNote = obj(content.credit_note);
  const candidates = [
    str(creditNote?.reference_invoice_id),
    ...arr(transaction?.linked_credit_notes).map((l) => str(obj(l)?.cn_reference_invoice_id)),
    str(invoice?.id),
  ].filter((c): c is string => c !== undefined);
  if (candidates.length === 0) return [];
  // Each refund is a transaction of its own (its amount, tax included): its share of what the
  // invoice charged. Chargebee's published sample abbreviates the invoice to amount_paid (no
  // total), so amount_paid stands in for total. Failing both, the credit note's sub_total (tax
  // excluded) is the amount; with neither, the refund's size is unknown and nothing is reversed
  // (never the whole charge on a guess).
  const fraction = fractionOf(minor(transaction?.amount), minor(invoice?.total) ?? minor(invoice?.amount_paid));
  const currency = currencyCode(creditNote?.currency_code);
  const creditSubtotal = minor(creditNote?.sub_total);
  let refund: RefundAction['refund'];
  if (fraction !== undefined) refund = { fraction };
  else if (currency && creditSubtotal) refund = { amount: major(creditSubtotal, currency) };
  else return [];
  return [{ kind: 'refund', candidates: [...new Set(candidates)], refund_id: transactionId, refund }];
}

export const chargebeeAdapter: ProviderAdapter = {
  provider: 'chargebee',
  verify(rawBody, headers, secret): VerifiedEvent {
    verifyBasicAuth(header(headers, 'authorization'), secret);
    const payload = parseJsonObject(rawBody);
    const id = str(payload?.id);
    const type = str(payload?.event_type);
    if (!payload || !id || !type) throw new BadRequestError('Malformed Chargebee event');
    return { id, type, payload };
  },
  map(event) {
    const content = obj(event.payload.content);
    if (!content) return [];
    switch (event.type) {
      case 'payment_succeeded':
        return paymentSucceeded(content, dateFrom(event.payload.occurred_at));
      case 'subscription_cancelled':
        return cancelOf(str(obj(content.subscription)?.customer_id) ?? str(obj(content.customer)?.id));
      case 'payment_refunded':
        return paymentRefunded(content);
      default:
        return [];
    }
  },
};
