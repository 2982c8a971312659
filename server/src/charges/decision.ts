import { Decimal } from 'decimal.js';
import { computeCommission, type CommissionRule } from '../attribution/commission.js';
import { resolveConversionKind, type ConversionKind } from '../attribution/kind.js';
import { assertWholeMinorUnits } from '../attribution/money.js';
import {
  assertIdentifiedWithinAmount,
  assertRefundAmount,
  isCovered,
  refundAmount,
  refundOutcome,
  reportKey,
  withReport,
  type RecordedRefund,
  type RefundIdentity,
  type RefundMeasure,
} from '../attribution/refunds.js';
import { isPastCommissionWindow } from '../attribution/windows.js';
import type { CustomerStatus } from '../modules/customers/customers.service.js';
import type { ChannelPolicy } from './channels.js';

/**
 * What a charge, a refund and a cancellation do to the money and to the customer: the decision,
 * the same for every channel but for the channel's named policies (channels.ts). Pure functions:
 * no I/O, no clock (the time is an input); the conversions module (conversions.service.ts,
 * charge-recorder.ts) gathers the facts and stores the outcome. The parts come from attribution/
 * (kind.ts, commission.ts, windows.ts, money.ts, refunds.ts); this file is where they are
 * combined, and the one the tests hold
 * (test/attribution/charge-decision.test.ts). A refusal is thrown as a domain error
 * (domain-errors.ts; the API answers it with its 4xx); each channel answers it by its policy.
 */

// ---- a charge -------------------------------------------------------------------------------

/** The program's rules a charge is decided by (attribution/cache.ts, ProgramRule). */
export interface ChargeProgram extends CommissionRule {
  /** Months from the customer's first conversion during which charges earn commission; null: lifetime. */
  commission_window_months: number | null;
  /** A customer's paid conversions that earn; after them the customer is capped. null/absent: no cap by count. */
  commission_max_conversions?: number | null;
  currency: string;
}

/** The customer a charge belongs to, as observed when deciding. */
export interface ObservedCustomer {
  status: CustomerStatus;
  firstConversionAt: Date | null;
  /** Paid conversions counted so far (while the program caps by count). */
  paidConversions?: number;
}

export interface ChargeFacts {
  /** Major units, as reported. */
  amount: string | number;
  /** As reported; undefined: the program's currency. */
  currency: string | undefined;
  requestedKind: ConversionKind | undefined;
  /** The charge names a click (cookie_id, ref or click_id). */
  byClick: boolean;
  /** undefined: a charge by click alone, without a customer. */
  customer: ObservedCustomer | undefined;
  program: ChargeProgram;
  /** The rate that applies (attribution/program-rules.ts applicableRate); absent: the program's. */
  rate?: CommissionRule;
  occurredAt: Date;
}

export interface ChargeDecision {
  currency: string;
  kind: ConversionKind;
  /** Rounded to the currency's minor unit; zero past the commission window. */
  commission: string;
  /** Past the program's commission window: the charge earns nothing and caps the customer. */
  pastCommissionWindow: boolean;
  /** The customer once this charge is recorded (paidConversions only while the program caps by count); undefined without a customer. */
  customer: { status: CustomerStatus; firstConversionAt: Date; paidConversions?: number } | undefined;
}

/**
 * The charge's currency (the program's unless given, upper case); 400 for an amount finer than its
 * minor unit. Also checked on its own before a charge creates its customer, so that a refused
 * charge writes nothing.
 */
export function chargeCurrency(
  amount: string | number,
  currency: string | undefined,
  program: Pick<ChargeProgram, 'currency'>,
): string {
  const code = (currency ?? program.currency).toUpperCase();
  assertWholeMinorUnits('amount', amount, code);
  return code;
}

/**
 * A paid charge activates a trial or canceled customer; past the commission window it caps them
 * (whatever the amount); capped stays capped; a zero charge changes nothing.
 */
export function statusAfterCharge(
  current: CustomerStatus,
  amount: string | number,
  pastCommissionWindow: boolean,
): CustomerStatus {
  if (pastCommissionWindow) return 'capped';
  if (Number(amount) > 0 && (current === 'trial' || current === 'canceled')) return 'active';
  return current;
}

/**
 * Kind, currency, commission, commission window (and the cap past it) and the customer's next
 * state of one charge. The commission window runs from the customer's first conversion, which is
 * this charge when it is the earliest (a charge reported late for an earlier time moves it back).
 */
export function decideCharge(
  facts: ChargeFacts,
  channel: Pick<ChannelPolicy, 'firstChargeByCustomer'>,
): ChargeDecision {
  const { customer, program, occurredAt } = facts;
  const kind = resolveConversionKind({
    requested: facts.requestedKind,
    hasCustomer: customer !== undefined,
    isFirstConversion: customer?.firstConversionAt == null,
    byCustomerIdOnly: customer !== undefined && !facts.byClick,
    firstChargeByCustomer: channel.firstChargeByCustomer,
  });
  const currency = chargeCurrency(facts.amount, facts.currency, program);
  const rate = facts.rate ?? program;
  if (!customer) {
    return {
      currency,
      kind,
      commission: computeCommission(rate, facts.amount, currency),
      pastCommissionWindow: false,
      customer: undefined,
    };
  }
  const observedFirst = customer.firstConversionAt;
  const firstConversionAt = observedFirst && observedFirst < occurredAt ? observedFirst : occurredAt;
  const pastCommissionWindow = isPastCommissionWindow(firstConversionAt, program.commission_window_months, occurredAt);
  // The cap by count: the first N paid conversions earn, the next one caps (as the window does).
  const maxConversions = program.commission_max_conversions ?? null;
  const paidSoFar = customer.paidConversions ?? 0;
  const capped = pastCommissionWindow || (maxConversions !== null && paidSoFar >= maxConversions);
  const counted = maxConversions !== null && !capped && new Decimal(facts.amount).gt(0);
  return {
    currency,
    kind,
    commission: computeCommission(rate, capped ? 0 : facts.amount, currency),
    pastCommissionWindow,
    customer: {
      status: statusAfterCharge(customer.status, facts.amount, capped),
      firstConversionAt,
      ...(maxConversions !== null ? { paidConversions: paidSoFar + (counted ? 1 : 0) } : {}),
    },
  };
}

// ---- a refund -------------------------------------------------------------------------------

/** A refund as a channel reports it (attribution/refunds.ts: measure and identity). */
export interface RefundReport {
  /** How much: the whole charge, a part of it, or an amount in major units. */
  measure: RefundMeasure;
  /** The refund's own id (the provider's refund id, or the merchant's refund_id); undefined: the charge's running total. */
  refundId: RefundIdentity;
}

/** The refunded charge as stored. */
export interface RefundedConversion {
  amount: string;
  currency: string;
  commission_amount: string;
  /** The commission before any refund; null until the first refund. */
  gross_commission_amount: string | null;
  refunded_amount: string;
  reversed_at: Date | null;
}

/** What a refund changes on its conversion. */
export interface RefundedState {
  refunded_amount: string;
  gross_commission_amount: string;
  commission_amount: string;
  status: 'approved' | 'reversed';
  reversed_at: Date | null;
}

export interface RefundDecision {
  /** The report to store (its key keeps the largest amount); undefined when one as large is stored already. */
  report: RecordedRefund | undefined;
  /** The conversion after its refunds; undefined when this report changes nothing (deduped). */
  next: RefundedState | undefined;
}

/**
 * One refund report on a conversion and the reports recorded before it: 400 for an amount no
 * charge can have (negative, finer than the minor unit, above the amount), 409 for identified
 * refunds that would total more than the amount; else the report to keep and the conversion's
 * refunded amount (running total and identified refunds each a lower bound, so one refund
 * reported by two channels counts once), commission (in proportion to what was kept, rounded to
 * the minor unit) and status (reversed once all of it is refunded).
 */
export function decideRefund(
  report: RefundReport,
  conversion: RefundedConversion,
  recorded: readonly RecordedRefund[],
  now: Date,
): RefundDecision {
  const charge = { amount: conversion.amount, currency: conversion.currency };
  const amount = refundAmount(report.measure, charge);
  assertRefundAmount(amount, charge);
  const key = reportKey(report.measure, report.refundId);
  assertIdentifiedWithinAmount(recorded, key, amount, charge);
  const grossCommission = conversion.gross_commission_amount ?? conversion.commission_amount;
  const outcome = refundOutcome(withReport(recorded, key, amount), { ...charge, grossCommission });
  const unchanged = new Decimal(outcome.refunded).equals(conversion.refunded_amount);
  return {
    report: isCovered(recorded, key, amount) ? undefined : { key, amount },
    next: unchanged
      ? undefined
      : {
          refunded_amount: outcome.refunded,
          gross_commission_amount: grossCommission,
          commission_amount: outcome.commission,
          status: outcome.reversed ? 'reversed' : 'approved',
          reversed_at: outcome.reversed ? (conversion.reversed_at ?? now) : null,
        },
  };
}

// ---- a cancellation -------------------------------------------------------------------------

/** A subscription cancelled: the customer becomes `canceled`; undefined when it is already (nothing changes). */
export function statusAfterCancellation(current: CustomerStatus): CustomerStatus | undefined {
  return current === 'canceled' ? undefined : 'canceled';
}
