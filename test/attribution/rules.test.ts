import { describe, expect, it } from 'vitest';
import { commissionAfterRefund, computeCommission } from '../../server/src/attribution/commission.js';
import { resolveConversionKind } from '../../server/src/attribution/kind.js';
import { MAX_FUTURE_SKEW_MS, resolveOccurredAt } from '../../server/src/attribution/occurred-at.js';
import { addMonthsUtc, isClickWindowExpired, isPastCommissionWindow } from '../../server/src/attribution/windows.js';
import { BadRequestError } from '../../server/src/http/errors.js';
import { nextCustomerStatus } from '../../server/src/modules/conversions/conversions.service.js';

const DAY = 86_400_000;

describe('click window', () => {
  const click = new Date('2026-01-01T00:00:00Z');
  it('attributes up to and including the last instant of the window', () => {
    expect(isClickWindowExpired(click, 30, new Date(click.getTime() + 30 * DAY))).toBe(false);
    expect(isClickWindowExpired(click, 30, new Date(click.getTime() + 30 * DAY + 1))).toBe(true);
  });
  it('a window of 0 days only attributes at the click instant', () => {
    expect(isClickWindowExpired(click, 0, click)).toBe(false);
    expect(isClickWindowExpired(click, 0, new Date(click.getTime() + 1000))).toBe(true);
  });
});

describe('commission window', () => {
  it('adds calendar months in UTC, clamping to the last day of the month', () => {
    expect(addMonthsUtc(new Date('2026-01-31T10:00:00Z'), 1).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(addMonthsUtc(new Date('2026-01-15T00:00:00Z'), 12).toISOString()).toBe('2027-01-15T00:00:00.000Z');
    expect(addMonthsUtc(new Date('2024-03-31T00:00:00Z'), -1).toISOString()).toBe('2024-02-29T00:00:00.000Z');
  });
  it('null months means lifetime', () => {
    expect(isPastCommissionWindow(new Date('2000-01-01Z'), null, new Date('2100-01-01Z'))).toBe(false);
  });
  it('is past the window strictly after first conversion + months', () => {
    const first = new Date('2026-01-10T00:00:00Z');
    expect(isPastCommissionWindow(first, 3, new Date('2026-04-10T00:00:00Z'))).toBe(false);
    expect(isPastCommissionWindow(first, 3, new Date('2026-04-10T00:00:00.001Z'))).toBe(true);
  });
});

describe('commission amount', () => {
  it('percent of the amount, exact decimal, half-up to 2 decimals', () => {
    expect(computeCommission({ commission_type: 'percent', commission_value: 30 }, 49.99, 'USD')).toBe('15.00');
    // 1.05 * 50% = 0.525 exactly: half-up gives 0.53 (binary floats would give 0.52)
    expect(computeCommission({ commission_type: 'percent', commission_value: 50 }, 1.05, 'USD')).toBe('0.53');
    expect(computeCommission({ commission_type: 'percent', commission_value: 15 }, 33.35, 'USD')).toBe('5.00');
    expect(computeCommission({ commission_type: 'percent', commission_value: 12.5 }, 0.1, 'USD')).toBe('0.01');
    expect(computeCommission({ commission_type: 'percent', commission_value: '33.333' }, 100, 'USD')).toBe('33.33');
    expect(computeCommission({ commission_type: 'percent', commission_value: 0 }, 100, 'USD')).toBe('0.00');
  });
  it('flat per paid conversion; nothing on a zero amount', () => {
    expect(computeCommission({ commission_type: 'flat', commission_value: 25 }, 99, 'USD')).toBe('25.00');
    expect(computeCommission({ commission_type: 'flat', commission_value: 2.345 }, 1, 'USD')).toBe('2.35');
    expect(computeCommission({ commission_type: 'flat', commission_value: 25 }, 0, 'USD')).toBe('0.00');
  });
  it("rounds to the currency's ISO 4217 minor unit: none for JPY, three decimals for BHD", () => {
    expect(computeCommission({ commission_type: 'percent', commission_value: 30 }, 1001, 'JPY')).toBe('300');
    expect(computeCommission({ commission_type: 'percent', commission_value: 50 }, 1001, 'jpy')).toBe('501');
    expect(computeCommission({ commission_type: 'percent', commission_value: 30 }, 10.005, 'BHD')).toBe('3.002');
    expect(computeCommission({ commission_type: 'flat', commission_value: 2.5 }, 1, 'HUF')).toBe('2.50');
  });
  it('a partial refund reduces the commission in proportion, rounded the same way; a full one to zero', () => {
    expect(commissionAfterRefund('30.00', '100', '40', 'USD')).toBe('18.00');
    expect(commissionAfterRefund('300', '1001', '1', 'JPY')).toBe('300');
    expect(commissionAfterRefund('300', '1001', '1001', 'JPY')).toBe('0');
  });
  it('handles amounts beyond float precision exactly', () => {
    expect(computeCommission({ commission_type: 'percent', commission_value: 10 }, '12345678901234.55', 'USD')).toBe('1234567890123.46');
  });
});

describe('conversion kind', () => {
  const base = { requested: undefined, hasCustomer: true, isFirstConversion: true, byCustomerIdOnly: false } as const;
  it('customer_id alone is recurring, even on the first conversion', () => {
    expect(resolveConversionKind({ ...base, byCustomerIdOnly: true })).toBe('recurring');
  });
  it('customer_id alone may ask for initial on the first conversion', () => {
    expect(resolveConversionKind({ ...base, byCustomerIdOnly: true, requested: 'initial' })).toBe('initial');
  });
  it('click attribution is initial on the first conversion, recurring after', () => {
    expect(resolveConversionKind(base)).toBe('initial');
    expect(resolveConversionKind({ ...base, isFirstConversion: false })).toBe('recurring');
  });
  it('click attribution alone (no customer) is initial', () => {
    expect(resolveConversionKind({ ...base, hasCustomer: false })).toBe('initial');
  });
  it('rejects initial after the first conversion and recurring without a customer', () => {
    expect(() => resolveConversionKind({ ...base, isFirstConversion: false, requested: 'initial' })).toThrow(BadRequestError);
    expect(() => resolveConversionKind({ ...base, hasCustomer: false, requested: 'recurring' })).toThrow(BadRequestError);
  });
});

describe('customer status after a conversion', () => {
  it('a paid conversion activates trial and canceled customers', () => {
    expect(nextCustomerStatus('trial', 10, false)).toBe('active');
    expect(nextCustomerStatus('canceled', 10, false)).toBe('active');
    expect(nextCustomerStatus('active', 10, false)).toBe('active');
  });
  it('a zero-amount conversion changes nothing; capped stays capped', () => {
    expect(nextCustomerStatus('trial', 0, false)).toBe('trial');
    expect(nextCustomerStatus('capped', 10, false)).toBe('capped');
  });
  it('past the commission window the customer is capped', () => {
    expect(nextCustomerStatus('active', 10, true)).toBe('capped');
    expect(nextCustomerStatus('trial', 0, true)).toBe('capped');
  });
});

describe('occurred_at', () => {
  const now = new Date('2026-06-01T12:00:00Z');
  it('defaults to now and accepts the past and up to 5 minutes ahead', () => {
    expect(resolveOccurredAt(undefined, now)).toBe(now);
    expect(resolveOccurredAt('2020-01-01T00:00:00+02:00', now).toISOString()).toBe('2019-12-31T22:00:00.000Z');
    expect(resolveOccurredAt(new Date(now.getTime() + MAX_FUTURE_SKEW_MS).toISOString(), now)).toBeInstanceOf(Date);
  });
  it('refuses more than 5 minutes in the future', () => {
    expect(() => resolveOccurredAt(new Date(now.getTime() + MAX_FUTURE_SKEW_MS + 1000).toISOString(), now)).toThrow(
      'occurred_at: must not be more than 5 minutes in the future',
    );
  });
});
