import { describe, expect, it } from 'vitest';
import { resolveConversionKind } from '../../server/src/attribution/kind.js';
import {
  RUNNING_TOTAL_KEY,
  assertIdentifiedWithinAmount,
  assertRefundAmount,
  refundAmount,
  refundKey,
  refundOutcome,
  reportKey,
  withReport,
  type RecordedRefund,
} from '../../server/src/attribution/refunds.js';

/** The refund and kind rules of every channel (attribution/refunds.ts, attribution/kind.ts), as pure functions. */
describe('refund rules', () => {
  const charge = { amount: '100', currency: 'USD', grossCommission: '30' };

  it('keys a refund by its identity, never by the channel that reported it; a full refund states the running total', () => {
    expect(refundKey(undefined)).toBe(RUNNING_TOTAL_KEY);
    expect(refundKey('re_1')).toBe('refund:re_1');
    expect(reportKey({ amount: '10' }, 're_1')).toBe('refund:re_1');
    expect(reportKey({ fraction: '0.5' }, undefined)).toBe(RUNNING_TOTAL_KEY);
    expect(reportKey({ full: true }, 'adj_2')).toBe(RUNNING_TOTAL_KEY);
  });

  it("measures a refund in the charge's own terms, rounded once to the currency's minor unit", () => {
    expect(refundAmount({ full: true }, { amount: '49.99', currency: 'USD' })).toBe('49.99');
    expect(refundAmount({ fraction: '0.84033613445378151261' }, { amount: '10', currency: 'USD' })).toBe('8.4');
    expect(refundAmount({ fraction: '0.5' }, { amount: '0.05', currency: 'USD' })).toBe('0.03');
    expect(refundAmount({ fraction: '0.3333' }, { amount: '1000', currency: 'JPY' })).toBe('333');
    expect(refundAmount({ amount: '12.50' }, { amount: '100', currency: 'USD' })).toBe('12.5');
  });

  it('refuses, on every channel alike, a refund above the amount, below zero, or finer than the minor unit', () => {
    expect(() => assertRefundAmount('100.01', charge)).toThrow('amount: must not exceed the conversion amount (100)');
    expect(() => assertRefundAmount('-1', charge)).toThrow('amount: must be >= 0');
    expect(() => assertRefundAmount('0.005', charge)).toThrow('amount: USD amounts have at most 2 decimals');
    expect(() => assertRefundAmount('100', charge)).not.toThrow();
  });

  it('a running total and identified refunds are each a lower bound: the larger counts, never their sum', () => {
    let recorded: RecordedRefund[] = [];
    recorded = withReport(recorded, refundKey(undefined), '40');
    expect(refundOutcome(recorded, charge)).toEqual({ refunded: '40', commission: '18.00', reversed: false });
    recorded = withReport(recorded, refundKey(undefined), '40'); // the same total from another channel
    recorded = withReport(recorded, refundKey('re_1'), '40'); // the same refund, named
    expect(refundOutcome(recorded, charge)).toEqual({ refunded: '40', commission: '18.00', reversed: false });
    recorded = withReport(recorded, refundKey('re_2'), '35');
    expect(refundOutcome(recorded, charge)).toMatchObject({ refunded: '75' });
    recorded = withReport(recorded, refundKey(undefined), '100');
    expect(refundOutcome(recorded, charge)).toEqual({ refunded: '100', commission: '0.00', reversed: true });
  });

  it('a repeat keeps the largest amount reported under its key', () => {
    const recorded = withReport(withReport([], 'refund:re_1', '30'), 'refund:re_1', '20');
    expect(recorded).toEqual([{ key: 'refund:re_1', amount: '30' }]);
  });

  it('identified refunds past the amount are refused (409); a running total is bounded by the amount alone', () => {
    const recorded = withReport([], refundKey('re_1'), '60');
    expect(() => assertIdentifiedWithinAmount(recorded, refundKey('re_2'), '60', charge)).toThrow(
      'amount: refunds would total 120, more than the conversion amount (100); 60 was already refunded under other refund ids',
    );
    expect(() => assertIdentifiedWithinAmount(recorded, refundKey('re_1'), '100', charge)).not.toThrow();
    expect(() => assertIdentifiedWithinAmount(recorded, RUNNING_TOTAL_KEY, '100', charge)).not.toThrow();
  });
});

describe('kind rules: one rule, the channel difference as a named policy', () => {
  const firstByCustomer = { requested: undefined, hasCustomer: true, isFirstConversion: true, byCustomerIdOnly: true } as const;

  it("a tracked customer's first charge by customer alone: recurring for the API, initial for payment providers", () => {
    expect(resolveConversionKind(firstByCustomer)).toBe('recurring');
    expect(resolveConversionKind({ ...firstByCustomer, firstChargeByCustomer: 'recurring' })).toBe('recurring');
    expect(resolveConversionKind({ ...firstByCustomer, firstChargeByCustomer: 'initial' })).toBe('initial');
  });

  it('later charges recur on every channel, and click attribution decides alike', () => {
    expect(resolveConversionKind({ ...firstByCustomer, isFirstConversion: false, firstChargeByCustomer: 'initial' })).toBe('recurring');
    for (const policy of ['initial', 'recurring'] as const) {
      expect(resolveConversionKind({ ...firstByCustomer, byCustomerIdOnly: false, firstChargeByCustomer: policy })).toBe('initial');
    }
  });
});
