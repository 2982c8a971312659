import { Decimal } from 'decimal.js';
import { ConflictError, InvalidInputError } from '../domain-errors.js';
import { commissionAfterRefund } from './commission.js';
import { assertWholeMinorUnits, roundToMinorUnit } from './money.js';

/**
 * The refund rules, the same for every channel (the API, each provider's webhooks): how a refund
 * is identified, how much it is in the charge's own terms, when it is refused, and what the
 * charge's refunded amount and commission become. Pure functions, combined in
 * charges/decision.ts (decideRefund); the conversions service stores their outcome.
 *
 * A refund is reported either with its own identity (the provider's refund id, or the merchant's
 * `refund_id`) or as the charge's running total (the API without `refund_id`; providers such as
 * Stripe, Lemon Squeezy and Polar report a cumulative refunded amount per charge). Each report is
 * a lower bound of what was refunded: the refunded amount is the larger of the running total and
 * the sum of the identified refunds, at most the amount. So one refund reported by two channels
 * (the merchant's API call and the provider's event, or the same refund id from both) counts once.
 */

/** A refund's own id, or undefined for a report of the charge's running total. */
export type RefundIdentity = string | undefined;

/** The stored key of a report: one row per identified refund, one for the running total. */
export const RUNNING_TOTAL_KEY = 'total';
export const refundKey = (refundId: RefundIdentity): string =>
  refundId === undefined ? RUNNING_TOTAL_KEY : `refund:${refundId}`;

/**
 * The key a report is recorded under. A refund of the whole charge states the running total (all
 * of it is refunded now), whatever its id: after a partial refund, a provider's "full" refund
 * (Paddle's `type: full`) refunds the rest, not the amount once more.
 */
export const reportKey = (measure: RefundMeasure, refundId: RefundIdentity): string =>
  'full' in measure ? RUNNING_TOTAL_KEY : refundKey(refundId);

/** The largest amount reported under each key so far (a repeat of a report changes nothing). */
export interface RecordedRefund {
  key: string;
  amount: string;
}

/** How a refund is measured: the whole charge, a part of it, or an amount in the charge's own terms (tax excluded). */
export type RefundMeasure = { full: true } | { fraction: string } | { amount: string };

export interface Charge {
  amount: string;
  currency: string;
}

/**
 * A refund's amount in the charge's own terms, to the currency's minor unit: the whole amount, or
 * the refunded fraction of it (a provider that refunded whole cents of a tax-inclusive total
 * refunded this share of the net amount), rounded once, half up.
 */
export function refundAmount(measure: RefundMeasure, charge: Charge): string {
  if ('full' in measure) return new Decimal(charge.amount).toString();
  if ('fraction' in measure)
    return new Decimal(
      roundToMinorUnit(new Decimal(charge.amount).times(measure.fraction), charge.currency),
    ).toString();
  return new Decimal(measure.amount).toString();
}

/** 400 for a refund no charge can have: negative, finer than the currency's minor unit, or above the amount. */
export function assertRefundAmount(amount: string, charge: Charge): void {
  const value = new Decimal(amount);
  if (value.isNegative()) throw new InvalidInputError('amount: must be >= 0');
  if (value.greaterThan(new Decimal(charge.amount))) {
    throw new InvalidInputError(
      `amount: must not exceed the conversion amount (${new Decimal(charge.amount).toString()})`,
    );
  }
  assertWholeMinorUnits('amount', amount, charge.currency);
}

/** A report as large as this one is recorded under its key already: this one changes nothing. */
export function isCovered(recorded: readonly RecordedRefund[], key: string, amount: string): boolean {
  const earlier = recorded.find((r) => r.key === key);
  return earlier !== undefined && new Decimal(earlier.amount).greaterThanOrEqualTo(new Decimal(amount));
}

/** The reports with this one recorded: a key keeps the largest amount reported under it. */
export function withReport(recorded: readonly RecordedRefund[], key: string, amount: string): RecordedRefund[] {
  if (isCovered(recorded, key, amount)) return [...recorded];
  return [...recorded.filter((r) => r.key !== key), { key, amount }];
}

/** What was refunded of the charge: the larger of the running total and the identified refunds' sum, at most the amount. */
export function refundedAmount(recorded: readonly RecordedRefund[], charge: Charge): Decimal {
  let runningTotal = new Decimal(0);
  let identified = new Decimal(0);
  for (const r of recorded) {
    if (r.key === RUNNING_TOTAL_KEY) runningTotal = Decimal.max(runningTotal, new Decimal(r.amount));
    else identified = identified.plus(new Decimal(r.amount));
  }
  return Decimal.min(Decimal.max(runningTotal, identified), new Decimal(charge.amount));
}

/**
 * 409 when the identified refunds would total more than the charge: refunds with different ids
 * add up, and past the amount one of them is a mistake. A running total is never past the amount
 * (assertRefundAmount), so it is not refused here.
 */
export function assertIdentifiedWithinAmount(
  recorded: readonly RecordedRefund[],
  key: string,
  amount: string,
  charge: Charge,
): void {
  if (key === RUNNING_TOTAL_KEY) return;
  const others = recorded
    .filter((r) => r.key !== RUNNING_TOTAL_KEY && r.key !== key)
    .reduce((sum, r) => sum.plus(new Decimal(r.amount)), new Decimal(0));
  const same = recorded.find((r) => r.key === key);
  const total = others.plus(Decimal.max(new Decimal(amount), new Decimal(same?.amount ?? '0')));
  if (total.greaterThan(new Decimal(charge.amount))) {
    throw new ConflictError(
      `amount: refunds would total ${total.toString()}, more than the conversion amount (${new Decimal(charge.amount).toString()}); ${others.toString()} was already refunded under other refund ids`,
    );
  }
}

export interface RefundedCharge extends Charge {
  /** The commission before any refund. */
  grossCommission: string;
}

export interface RefundOutcome {
  refunded: string;
  commission: string;
  /** The charge is fully refunded: the commission is reversed. */
  reversed: boolean;
}

/** The charge after its refunds: the refunded amount, the commission still owed, reversed or not. */
export function refundOutcome(recorded: readonly RecordedRefund[], charge: RefundedCharge): RefundOutcome {
  const refunded = refundedAmount(recorded, charge);
  return {
    refunded: refunded.toString(),
    commission: commissionAfterRefund(charge.grossCommission, charge.amount, refunded.toString(), charge.currency),
    reversed: refunded.greaterThanOrEqualTo(new Decimal(charge.amount)),
  };
}
