import { Decimal } from 'decimal.js';
import type { ZodTypeAny } from 'zod';
import {
  CreateConversionBody,
  CreateCustomerBody,
  ErrorMessages,
  Identifier,
  RefundConversionBody,
} from '@affiliate-attribution/contract';
import { findUnstorableText } from '../http/security.js';
import { isUuid } from '../http/serialize.js';
import { describeZodError } from '../http/validation-message.js';
import type {
  CancelAction,
  PaymentAction,
  ReferenceAction,
  RefundAction,
  VerifiedEvent,
  WebhookAction,
} from './types.js';

/**
 * The API's input rules, applied to what an adapter mapped from a provider event, in one place for
 * every provider: the same contract schemas `POST /api/conversions`, `POST /api/customers` and
 * `POST /api/conversions/{id}/refund` validate with, and the refusal of U+0000 and of lone UTF-16
 * surrogates (PostgreSQL text cannot store the first, and stores the second as U+FFFD, so two
 * distinct provider ids would become one; the API refuses both before any query). A signed event
 * is genuine but may still carry values the API would answer 400 for (an amount of 1e22 minor
 * units, an id of 10 kB, `"in_\ud800"`): those never reach a query. The dispatcher answers such an event 200 `ignored` with the reason.
 */

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

const NUL_REASON = 'NUL characters (U+0000) are not allowed';

const invalid = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

/** Why a mapped value (a string or a list of them) cannot be stored as the provider sent it (http/security.ts findUnstorableText), or undefined. */
function unstorable(value: unknown): string | undefined {
  const found = findUnstorableText(value);
  if (!found) return undefined;
  return found.kind === 'NUL' ? NUL_REASON : ErrorMessages.loneSurrogate;
}

/** One field against its API schema; the reason names the field, as the API's 400 does. */
function field<T>(name: string, schema: ZodTypeAny, value: unknown): Checked<T> {
  const text = unstorable(value);
  if (text) return invalid(`${name}: ${text}`);
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data as T } : invalid(describeZodError(parsed.error, name));
}

/** A whole request body against its API schema (stored text first: zod would accept NUL and lone surrogates). */
function body<T>(schema: ZodTypeAny, input: Record<string, unknown>): Checked<T> {
  for (const [name, value] of Object.entries(input)) {
    const text = unstorable(value);
    if (text) return invalid(`${name}: ${text}`);
  }
  const parsed = schema.safeParse(input);
  return parsed.success ? { ok: true, value: parsed.data as T } : invalid(describeZodError(parsed.error));
}

/** The referral is a click id (UUID), or a cookie id or slug (the service tells those apart). */
export const referralFields = (referral: string): { click_id: string } | { cookie_id: string } =>
  isUuid(referral) ? { click_id: referral } : { cookie_id: referral };

/**
 * A provider's time, never ahead of our clock: provider clocks (and Stripe's test clocks) may run
 * ahead, and a charge cannot have happened after we heard of it. An invalid or out-of-range time
 * stays invalid for the schema to refuse.
 */
function occurredAt(at: Date | undefined, now: Date): string | undefined {
  if (at === undefined) return undefined;
  if (Number.isNaN(at.getTime())) return 'invalid';
  return new Date(Math.min(at.getTime(), now.getTime())).toISOString();
}

/** The event's own id and type: the keys it is remembered by (webhook_events). */
export function checkEvent(event: VerifiedEvent): Checked<VerifiedEvent> {
  const id = field<string>('event id', Identifier, event.id);
  if (!id.ok) return id;
  const type = field<string>('event type', Identifier, event.type);
  return type.ok ? { ok: true, value: event } : type;
}

export interface CheckedPayment {
  kind: 'payment';
  /** external_id, amount (the exact decimal string, range-checked), currency, customer_id, occurred_at. */
  conversion: {
    external_id: string;
    amount: string;
    currency: string;
    customer_id?: string | undefined;
    occurred_at?: string | undefined;
  };
  referral?: { click_id: string } | { cookie_id: string } | undefined;
  email?: string | undefined;
  coupon?: string | undefined;
}

export type CheckedAction = CheckedPayment | CancelAction | RefundAction | ReferenceAction;

function checkPayment(p: PaymentAction, now: Date): Checked<CheckedPayment> {
  const referral = p.referral === undefined ? undefined : referralFields(p.referral);
  const input = {
    external_id: p.external_id,
    // The schema judges the number; the service is given the exact decimal string.
    amount: Number(p.amount),
    currency: p.currency,
    customer_id: p.customer_id,
    ...referral,
    occurred_at: occurredAt(p.occurred_at, now),
  };
  const checked = body<{ currency?: string; customer_id?: string; occurred_at?: string }>(CreateConversionBody, input);
  if (!checked.ok) return checked;
  // An e-mail only decorates a tracked customer: one the API would refuse is dropped, not the sale.
  const email =
    p.email !== undefined && field<string>('email', CreateCustomerBody.shape.email, p.email).ok ? p.email : undefined;
  // So does a discount code: the weakest attribution input, dropped when the API would refuse it.
  const coupon =
    p.coupon !== undefined && field<string>('coupon', CreateConversionBody.shape.coupon, p.coupon).ok
      ? p.coupon
      : undefined;
  return {
    ok: true,
    value: {
      kind: 'payment',
      conversion: {
        external_id: p.external_id,
        amount: p.amount,
        currency: p.currency,
        customer_id: checked.value.customer_id,
        occurred_at: checked.value.occurred_at,
      },
      referral,
      email,
      coupon,
    },
  };
}

function checkRefund(r: RefundAction): Checked<RefundAction> {
  // Ids that no conversion can have are not looked up (a NUL would fail the query itself, a lone
  // surrogate would find the conversion of another id).
  const checks = r.candidates.map((c) => field<string>('external_id', CreateConversionBody.shape.external_id, c));
  const candidates = r.candidates.filter((_, i) => checks[i].ok);
  if (candidates.length === 0)
    return invalid(checks.map((c) => (c.ok ? '' : c.reason)).find((reason) => reason) ?? 'external_id: Required');
  if (r.refund_id !== undefined) {
    const id = field<string>('refund_id', RefundConversionBody.shape.refund_id, r.refund_id);
    if (!id.ok) return id;
  }
  if ('amount' in r.refund) {
    const amount = field('amount', RefundConversionBody.shape.amount, Number(r.refund.amount));
    if (!amount.ok) return amount;
  }
  if ('fraction' in r.refund) {
    const fraction = new Decimal(r.refund.fraction);
    if (fraction.isNegative() || fraction.greaterThan(1))
      return invalid('amount: the refunded part must be between none and all of the charge');
  }
  return { ok: true, value: { ...r, candidates } };
}

/** What an action asks, checked against the API's rules; the reason when the API would refuse it. */
export function checkAction(action: WebhookAction, now = new Date()): Checked<CheckedAction> {
  switch (action.kind) {
    case 'payment':
      return checkPayment(action, now);
    case 'cancel': {
      const customer = field('customer_id', CreateCustomerBody.shape.customer_id, action.customer_id);
      return customer.ok ? { ok: true, value: action } : customer;
    }
    case 'refund':
      return checkRefund(action);
    case 'reference': {
      const reference = field('reference', CreateConversionBody.shape.external_id, action.reference);
      if (!reference.ok) return reference;
      const externalId = field('external_id', CreateConversionBody.shape.external_id, action.external_id);
      return externalId.ok ? { ok: true, value: action } : externalId;
    }
  }
}
