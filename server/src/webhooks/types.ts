import { minorUnitDigits } from '../attribution/money.js';
import type { RefundMeasure } from '../attribution/refunds.js';
import type { IncomingHttpHeaders } from 'node:http';
import { Decimal } from 'decimal.js';
import type { WebhookProvider } from '@affiliate-attribution/contract';

/** The metadata key, set at checkout, that carries the referral (cookie id, slug or click id). */
export const REFERRAL_METADATA_KEY = 'ref_svc_affiliate';

/** Providers that sign with a timestamp: older (or further ahead) than this is refused. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

export type Json = Record<string, unknown>;

/** A provider event whose signature checked out, parsed. */
export interface VerifiedEvent {
  /** The provider's event id: what a redelivery repeats. */
  id: string;
  type: string;
  payload: Json;
}

/**
 * A charge: becomes a conversion (initial or recurring, by the service's rules). Adapters map what
 * the provider sent without judging sizes or characters; input-rules.ts holds every action to the
 * API's schemas before anything is looked up or written.
 */
export interface PaymentAction {
  kind: 'payment';
  /** The provider's payment or invoice id: the conversion's external_id. */
  external_id: string;
  /** Major units, exact decimal string, tax excluded. */
  amount: string;
  currency: string;
  customer_id?: string | undefined;
  referral?: string | undefined;
  /** The provider's time of the charge; an invalid Date when it sent one that is not a time. */
  occurred_at?: Date | undefined;
  email?: string | undefined;
  /** The promotion or discount code the payment used (a coupon of the organization attributes it when no referral does). */
  coupon?: string | undefined;
}

/** A subscription cancelled: the customer becomes `canceled`. */
export interface CancelAction {
  kind: 'cancel';
  customer_id: string;
}

/**
 * A refund of a charge, found by the first candidate id that names a conversion (directly or
 * through a payment reference). Either the whole charge, a fraction of it, or an amount in the
 * conversion's own terms (major units, tax excluded). `refund_id` is the provider's id of this one
 * refund; undefined when the provider reports the charge's cumulative refunded total instead
 * (attribution/refunds.ts: either way, one refund counts once).
 */
export interface RefundAction {
  kind: 'refund';
  candidates: string[];
  refund_id?: string;
  refund: RefundMeasure;
}

/** Another id of the same charge (a Stripe payment intent of an invoice, say). */
export interface ReferenceAction {
  kind: 'reference';
  reference: string;
  external_id: string;
}

export type WebhookAction = PaymentAction | CancelAction | RefundAction | ReferenceAction;

export interface ProviderAdapter {
  readonly provider: WebhookProvider;
  /** Verifies the raw bytes as the provider documents it and parses them; throws BadRequestError. */
  verify(rawBody: Buffer, headers: IncomingHttpHeaders, secret: string, now?: Date): VerifiedEvent;
  /** The actions an event asks for; none for event types the service does not use. */
  map(event: VerifiedEvent): WebhookAction[];
}

// ---- reading untyped provider JSON -----------------------------------------------------------

export const obj = (value: unknown): Json | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;

export const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** A non-empty string, or a number as a string (Lemon Squeezy and Chargebee send numeric ids). */
export function str(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim().length > 0 ? value.trim() : undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** An id that may arrive expanded (`{ id, ... }`) or as a plain string. */
export const idOf = (value: unknown): string | undefined => str(value) ?? str(obj(value)?.id);

/**
 * An integer amount in minor units (number or numeric string). Its size is not judged here: the
 * major-unit amount it becomes passes the API's own rules (input-rules.ts).
 */
export function minor(value: unknown): Decimal | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return new Decimal(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return new Decimal(value.trim());
  return undefined;
}

/** `metadata.ref_svc_affiliate`; metadata may arrive as an object or as a JSON string (Chargebee). */
export function referralFrom(...metadatas: unknown[]): string | undefined {
  for (const metadata of metadatas) {
    let m = obj(metadata);
    if (!m && typeof metadata === 'string') {
      try {
        m = obj(JSON.parse(metadata));
      } catch {
        m = undefined;
      }
    }
    const value = str(m?.[REFERRAL_METADATA_KEY]);
    if (value && value.length <= 255) return value;
  }
  return undefined;
}

export function parseJsonObject(rawBody: Buffer): Json | undefined {
  try {
    return obj(JSON.parse(rawBody.toString('utf8')));
  } catch {
    return undefined;
  }
}

export const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};

/**
 * Unix seconds or an ISO string to a Date; undefined when absent. A value that is present but no
 * valid time stays an invalid Date, so that input-rules.ts refuses it as the API would, rather than
 * the event silently taking another time.
 */
export function dateFrom(value: unknown): Date | undefined {
  if (typeof value === 'number') return new Date(value * 1000);
  if (typeof value === 'string' && value.length > 0) return new Date(value);
  return undefined;
}

// ---- money -----------------------------------------------------------------------------------

/** Minor units to an exact major-unit decimal string: 4999 USD -> "49.99", 500 JPY -> "500". */
export function toMajor(amountMinor: Decimal, exponent: number): string {
  return amountMinor.dividedBy(new Decimal(10).pow(exponent)).toString();
}

/**
 * Minor units (never below 0) to major units by the currency's ISO 4217 exponent, the service's one
 * table of minor units (attribution/money.ts): how Paddle, Lemon Squeezy, Polar and Chargebee count.
 */
export const isoMajor = (amountMinor: Decimal, currency: string): string =>
  toMajor(Decimal.max(amountMinor, 0), minorUnitDigits(currency));

/** The currency as the provider wrote it, upper case; whether it is an ISO 4217 code is judged by input-rules.ts. */
export const currencyCode = (value: unknown): string | undefined => str(value)?.toUpperCase();

/**
 * The part of a payment that is not tax, in minor units rounded half-up: paid x (total - tax) / total.
 * It is paid - tax when the whole total was paid; when a customer balance or credits paid part of
 * the invoice, tax is taken off in proportion instead of whole from the part paid. Anything paid
 * beyond the total (an overpayment, kept as the customer's balance) is no sale.
 */
export function netOfTax(paid: Decimal, total: Decimal | undefined, tax: Decimal): Decimal {
  if (!total || total.lessThanOrEqualTo(0)) return Decimal.max(paid.minus(tax), 0);
  const charged = Decimal.min(paid, total);
  return Decimal.max(charged.times(total.minus(tax)).dividedBy(total).toDecimalPlaces(0, Decimal.ROUND_HALF_UP), 0);
}

/** refunded / charged as a decimal string, or undefined when it cannot be known. */
export function fractionOf(refunded: Decimal | undefined, charged: Decimal | undefined): string | undefined {
  if (!refunded || !charged || charged.lessThanOrEqualTo(0)) return undefined;
  return Decimal.min(refunded.dividedBy(charged), 1).toString();
}

/**
 * A charge's cumulative refunded amount, as Stripe, Lemon Squeezy and Polar report it: the
 * running total (no refund id), the whole charge once it is all refunded, else the refunded share
 * of what was charged (both in the provider's minor units, tax included or not alike); nothing when
 * its size cannot be known.
 */
export function runningTotalRefund(
  candidates: string[],
  refunded: Decimal | undefined,
  charged: Decimal | undefined,
  fullyRefunded: boolean,
): RefundAction[] {
  const full =
    fullyRefunded || (refunded !== undefined && charged !== undefined && refunded.greaterThanOrEqualTo(charged));
  const fraction = fractionOf(refunded, charged);
  if (full) return [{ kind: 'refund', candidates, refund: { full: true } }];
  return fraction === undefined ? [] : [{ kind: 'refund', candidates, refund: { fraction } }];
}

/** A subscription cancelled for this customer; nothing when the event names none. */
export const cancelOf = (customerId: string | undefined): CancelAction[] =>
  customerId ? [{ kind: 'cancel', customer_id: customerId }] : [];
