import { describe, expect, it } from 'vitest';
import { commissionAfterRefund, computeCommission } from '../../server/src/attribution/commission.js';
import { RUNNING_TOTAL_KEY, refundKey, type RecordedRefund } from '../../server/src/attribution/refunds.js';
import { addMonthsUtc, isPastCommissionWindow } from '../../server/src/attribution/windows.js';
import { API_CHANNEL, PROVIDER_CHANNEL } from '../../server/src/charges/channels.js';
import {
  decideCharge,
  decideRefund,
  statusAfterCancellation,
  statusAfterCharge,
  type ChargeFacts,
  type ChargeProgram,
  type RefundedConversion,
  type RefundReport,
} from '../../server/src/charges/decision.js';
import { InvalidInputError } from '../../server/src/domain-errors.js';

/**
 * The money rules of every channel (server/src/charges/decision.ts and the parts it combines from
 * attribution/), as pure functions: kind, commission and its rounding, the commission window and
 * the cap past it, the customer's status, refund identity, amounts, refusals and rounding. The
 * one file for them; what each channel does with a refusal is tested where it answers (the API's
 * and the webhooks' tests).
 */

const at = new Date('2026-06-01T00:00:00Z');
const program = (rule: Partial<ChargeProgram> = {}): ChargeProgram => ({
  commission_type: 'percent',
  commission_value: '30',
  commission_window_months: 12,
  currency: 'USD',
  ...rule,
});
const facts = (f: Partial<ChargeFacts> = {}): ChargeFacts => ({
  amount: '100',
  currency: undefined,
  requestedKind: undefined,
  byClick: true,
  customer: undefined,
  program: program(),
  occurredAt: at,
  ...f,
});
const tracked = (
  firstConversionAt: Date | null = null,
  status: 'trial' | 'active' | 'capped' | 'canceled' = 'active',
) => ({ status, firstConversionAt });
const commissionOf = (amount: string | number, rule: Partial<ChargeProgram>, currency?: string) =>
  decideCharge(facts({ amount, currency, program: program(rule) }), API_CHANNEL).commission;

describe('a charge: commission', () => {
  it('percent of the amount, exact decimal, half-up to 2 decimals', () => {
    expect(commissionOf(49.99, { commission_value: '30' })).toBe('15.00');
    // 1.05 * 50% = 0.525 exactly: half-up gives 0.53 (binary floats would give 0.52)
    expect(commissionOf(1.05, { commission_value: '50' })).toBe('0.53');
    expect(commissionOf(33.35, { commission_value: '15' })).toBe('5.00');
    expect(commissionOf(0.1, { commission_value: '12.5' })).toBe('0.01');
    expect(commissionOf(100, { commission_value: '33.333' })).toBe('33.33');
    expect(commissionOf(100, { commission_value: '0' })).toBe('0.00');
  });

  it('flat per paid conversion; nothing on a zero amount', () => {
    expect(commissionOf(99, { commission_type: 'flat', commission_value: '25' })).toBe('25.00');
    expect(commissionOf(1, { commission_type: 'flat', commission_value: '2.345' })).toBe('2.35');
    expect(commissionOf(0, { commission_type: 'flat', commission_value: '25' })).toBe('0.00');
  });

  it("rounds to the currency's ISO 4217 minor unit: none for JPY, three decimals for BHD", () => {
    expect(commissionOf(1001, { currency: 'JPY' })).toBe('300');
    expect(commissionOf(1001, { commission_value: '50' }, 'jpy')).toBe('501');
    expect(commissionOf('10.005', {}, 'BHD')).toBe('3.002');
    expect(commissionOf(1, { commission_type: 'flat', commission_value: '2.5' }, 'HUF')).toBe('2.50');
    expect(computeCommission({ commission_type: 'percent', commission_value: 30 }, 1001, 'JPY')).toBe('300');
  });

  it('handles amounts beyond float precision exactly', () => {
    expect(commissionOf('12345678901234.55', { commission_value: '10' })).toBe('1234567890123.46');
  });

  it("takes the program's currency unless one is given, upper case, and refuses amounts finer than its minor unit", () => {
    expect(decideCharge(facts(), API_CHANNEL).currency).toBe('USD');
    expect(decideCharge(facts({ currency: 'eur' }), API_CHANNEL).currency).toBe('EUR');
    expect(() => decideCharge(facts({ amount: '0.005' }), API_CHANNEL)).toThrow(
      'amount: USD amounts have at most 2 decimals',
    );
    expect(() => decideCharge(facts({ amount: '0.5', currency: 'JPY' }), API_CHANNEL)).toThrow(
      'amount: JPY amounts have at most 0 decimals',
    );
  });
});

describe('a charge: kind, one rule with a per-channel policy', () => {
  const firstByCustomer = facts({ byClick: false, customer: tracked() });

  it("a tracked customer's first charge by customer alone: recurring for the API, initial for payment providers", () => {
    expect(decideCharge(firstByCustomer, API_CHANNEL).kind).toBe('recurring');
    expect(decideCharge(firstByCustomer, PROVIDER_CHANNEL).kind).toBe('initial');
  });

  it('the API may ask for initial on the first conversion by customer alone', () => {
    expect(decideCharge({ ...firstByCustomer, requestedKind: 'initial' }, API_CHANNEL).kind).toBe('initial');
  });

  it('later charges recur on every channel, and click attribution decides alike', () => {
    const later = { ...firstByCustomer, customer: tracked(new Date('2026-05-01Z')) };
    for (const channel of [API_CHANNEL, PROVIDER_CHANNEL]) {
      expect(decideCharge(later, channel).kind).toBe('recurring');
      expect(decideCharge({ ...firstByCustomer, byClick: true }, channel).kind).toBe('initial');
      expect(decideCharge({ ...later, byClick: true }, channel).kind).toBe('recurring');
      expect(decideCharge(facts(), channel).kind).toBe('initial');
    }
  });

  it('refuses initial after the first conversion and recurring without a customer', () => {
    expect(() =>
      decideCharge(facts({ customer: tracked(new Date('2026-05-01Z')), requestedKind: 'initial' }), API_CHANNEL),
    ).toThrow(InvalidInputError);
    expect(() => decideCharge(facts({ requestedKind: 'recurring' }), API_CHANNEL)).toThrow(
      'kind: "recurring" requires a customer_id',
    );
  });
});

describe('a charge: commission window and the cap past it', () => {
  it('adds calendar months in UTC, clamping to the last day of the month; null months means lifetime', () => {
    expect(addMonthsUtc(new Date('2026-01-31T10:00:00Z'), 1).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(addMonthsUtc(new Date('2026-01-15T00:00:00Z'), 12).toISOString()).toBe('2027-01-15T00:00:00.000Z');
    expect(addMonthsUtc(new Date('2024-03-31T00:00:00Z'), -1).toISOString()).toBe('2024-02-29T00:00:00.000Z');
    expect(isPastCommissionWindow(new Date('2000-01-01Z'), null, new Date('2100-01-01Z'))).toBe(false);
  });

  it('earns commission up to the end of the window, from the first conversion; strictly after it, nothing, and the customer is capped', () => {
    const first = new Date('2026-01-10T00:00:00Z');
    const renewal = (occurredAt: Date) =>
      decideCharge(
        facts({
          byClick: false,
          customer: tracked(first),
          program: program({ commission_window_months: 3 }),
          occurredAt,
        }),
        API_CHANNEL,
      );
    const decided = (commission: string, pastCommissionWindow: boolean, status: string) => ({
      currency: 'USD',
      kind: 'recurring',
      commission,
      pastCommissionWindow,
      customer: { status, firstConversionAt: first },
    });
    expect(renewal(new Date('2026-04-10T00:00:00Z'))).toEqual(decided('30.00', false, 'active'));
    expect(renewal(new Date('2026-04-10T00:00:00.001Z'))).toEqual(decided('0.00', true, 'capped'));
  });

  it("a customer's first charge starts the window; one reported late for an earlier time moves its start back", () => {
    const first = decideCharge(facts({ customer: tracked(null, 'trial') }), API_CHANNEL);
    expect(first.customer).toEqual({ status: 'active', firstConversionAt: at });
    const earlier = new Date('2026-01-01T00:00:00Z');
    const late = decideCharge(facts({ byClick: false, customer: tracked(at), occurredAt: earlier }), API_CHANNEL);
    expect(late.customer?.firstConversionAt).toEqual(earlier);
  });

  it('a lifetime program never caps', () => {
    const decision = decideCharge(
      facts({ customer: tracked(new Date('2001-01-01Z')), program: program({ commission_window_months: null }) }),
      API_CHANNEL,
    );
    expect(decision).toMatchObject({
      pastCommissionWindow: false,
      commission: '30.00',
      customer: { status: 'active' },
    });
  });
});

describe("a charge: the customer's status", () => {
  it('a paid charge activates trial and canceled customers', () => {
    expect(statusAfterCharge('trial', 10, false)).toBe('active');
    expect(statusAfterCharge('canceled', '0.01', false)).toBe('active');
    expect(statusAfterCharge('active', 10, false)).toBe('active');
  });

  it('a zero-amount charge changes nothing; capped stays capped', () => {
    expect(statusAfterCharge('trial', 0, false)).toBe('trial');
    expect(statusAfterCharge('capped', 10, false)).toBe('capped');
  });

  it('past the commission window the customer is capped, whatever the amount', () => {
    expect(statusAfterCharge('active', 10, true)).toBe('capped');
    expect(statusAfterCharge('trial', 0, true)).toBe('capped');
  });

  it('a cancellation cancels; a customer canceled already stays as it is', () => {
    expect(statusAfterCancellation('active')).toBe('canceled');
    expect(statusAfterCancellation('capped')).toBe('canceled');
    expect(statusAfterCancellation('canceled')).toBeUndefined();
  });
});

describe('a refund', () => {
  const now = new Date('2026-06-02T00:00:00Z');
  const conversion = (c: Partial<RefundedConversion> = {}): RefundedConversion => ({
    amount: '100',
    currency: 'USD',
    commission_amount: '30.00',
    gross_commission_amount: null,
    refunded_amount: '0',
    reversed_at: null,
    ...c,
  });
  const total = (amount: string): RefundReport => ({ measure: { amount }, refundId: undefined });
  const named = (refundId: string, amount: string): RefundReport => ({ measure: { amount }, refundId });

  /** Reports one after the other, as the repository stores them: the conversion and the recorded reports after each. */
  function apply(reports: RefundReport[], start = conversion()) {
    let current = start;
    let recorded: RecordedRefund[] = [];
    const decisions = [];
    for (const report of reports) {
      const decision = decideRefund(report, current, recorded, now);
      decisions.push(decision);
      if (decision.report) recorded = [...recorded.filter((r) => r.key !== decision.report!.key), decision.report];
      if (decision.next) current = { ...current, ...decision.next };
    }
    return { conversion: current, recorded, decisions };
  }

  it('keys a refund by its identity, never by the channel that reported it; a full refund states the running total', () => {
    expect(decideRefund(named('re_1', '10'), conversion(), [], now).report).toEqual({
      key: 'refund:re_1',
      amount: '10',
    });
    expect(decideRefund(total('10'), conversion(), [], now).report).toEqual({ key: RUNNING_TOTAL_KEY, amount: '10' });
    expect(decideRefund({ measure: { fraction: '0.5' }, refundId: undefined }, conversion(), [], now).report).toEqual({
      key: RUNNING_TOTAL_KEY,
      amount: '50',
    });
    expect(decideRefund({ measure: { full: true }, refundId: 'adj_2' }, conversion(), [], now).report).toEqual({
      key: RUNNING_TOTAL_KEY,
      amount: '100',
    });
  });

  it("measures a refund in the charge's own terms, rounded once to the currency's minor unit (issue 13: a provider's share stored 8.403361)", () => {
    const fraction = (f: string, c: Partial<RefundedConversion>) =>
      decideRefund({ measure: { fraction: f }, refundId: undefined }, conversion(c), [], now).next?.refunded_amount;
    // 10.00 x 1000 / 1190 (a tax-inclusive Stripe charge): 8.40, as the API would store it.
    expect(fraction('0.84033613445378151261', { amount: '10' })).toBe('8.4');
    expect(fraction('0.5', { amount: '0.05' })).toBe('0.03');
    expect(fraction('0.3333', { amount: '1000', currency: 'JPY', commission_amount: '300' })).toBe('333');
    expect(
      decideRefund({ measure: { full: true }, refundId: undefined }, conversion({ amount: '49.99' }), [], now).next
        ?.refunded_amount,
    ).toBe('49.99');
    expect(decideRefund(total('12.50'), conversion(), [], now).next?.refunded_amount).toBe('12.5');
  });

  it('refuses, on every channel alike, a refund above the amount (400), below zero, or finer than the minor unit', () => {
    expect(() => decideRefund(total('100.01'), conversion(), [], now)).toThrow(
      'amount: must not exceed the conversion amount (100)',
    );
    expect(() => decideRefund(total('-1'), conversion(), [], now)).toThrow('amount: must be >= 0');
    expect(() => decideRefund(total('0.005'), conversion(), [], now)).toThrow(
      'amount: USD amounts have at most 2 decimals',
    );
    expect(() => decideRefund(named('re_1', '100.01'), conversion(), [], now)).toThrow(
      expect.objectContaining({ kind: 'invalid-input' }),
    );
    expect(decideRefund(total('100'), conversion(), [], now).next).toMatchObject({ refunded_amount: '100' });
  });

  it('identified refunds past the amount are refused (409); a running total is bounded by the amount alone', () => {
    const recorded = [{ key: refundKey('re_1'), amount: '60' }];
    expect(() => decideRefund(named('re_2', '60'), conversion({ refunded_amount: '60' }), recorded, now)).toThrow(
      expect.objectContaining({
        kind: 'conflict',
        message:
          'amount: refunds would total 120, more than the conversion amount (100); 60 was already refunded under other refund ids',
      }),
    );
    expect(() =>
      decideRefund(named('re_1', '100'), conversion({ refunded_amount: '60' }), recorded, now),
    ).not.toThrow();
    expect(() => decideRefund(total('100'), conversion({ refunded_amount: '60' }), recorded, now)).not.toThrow();
  });

  it('one refund reported by two channels counts once (issue 13: the API and Stripe were summed, 80 and 6 instead of 40 and 18)', () => {
    const { conversion: after, decisions } = apply([total('40'), total('40'), named('re_1', '40')]);
    expect(after).toMatchObject({
      refunded_amount: '40',
      commission_amount: '18.00',
      gross_commission_amount: '30.00',
      status: 'approved',
    });
    // The repeat from another channel changes nothing (deduped); the same refund named records its report, still 40.
    expect(decisions.map((d) => d.next !== undefined)).toEqual([true, false, false]);
    expect(decisions.map((d) => d.report?.key)).toEqual([RUNNING_TOTAL_KEY, undefined, 'refund:re_1']);
  });

  it('a running total and identified refunds are each a lower bound: the larger counts, never their sum', () => {
    const partial = apply([total('40'), named('re_1', '40'), named('re_2', '35')]);
    expect(partial.conversion).toMatchObject({ refunded_amount: '75', commission_amount: '7.50' });
    const all = apply([total('40'), named('re_1', '40'), named('re_2', '35'), total('100')]);
    expect(all.conversion).toMatchObject({
      refunded_amount: '100',
      commission_amount: '0.00',
      status: 'reversed',
      reversed_at: now,
    });
  });

  it('a repeat keeps the largest amount reported under its key', () => {
    const { recorded, decisions } = apply([named('re_1', '30'), named('re_1', '20')]);
    expect(recorded).toEqual([{ key: 'refund:re_1', amount: '30' }]);
    expect(decisions[1]).toEqual({ report: undefined, next: undefined });
  });

  it('the commission follows in proportion to what was kept, from the commission before any refund, rounded like every commission', () => {
    expect(apply([total('40')]).conversion).toMatchObject({
      commission_amount: '18.00',
      gross_commission_amount: '30.00',
    });
    // After a first refund the stored commission is reduced; the next one starts from the gross.
    expect(
      apply(
        [total('40')],
        conversion({ commission_amount: '27.00', gross_commission_amount: '30.00', refunded_amount: '10' }),
      ).conversion,
    ).toMatchObject({ commission_amount: '18.00' });
    expect(commissionAfterRefund('300', '1001', '1', 'JPY')).toBe('300');
    expect(commissionAfterRefund('300', '1001', '1001', 'JPY')).toBe('0');
  });

  it('a charge is reversed by the refund that completes it, at its time; a later report of it changes nothing', () => {
    const { conversion: reversed } = apply([named('re_1', '60'), named('re_2', '40')]);
    expect(reversed).toMatchObject({
      refunded_amount: '100',
      status: 'reversed',
      reversed_at: now,
      commission_amount: '0.00',
    });
    const { decisions } = apply([
      named('re_1', '60'),
      named('re_2', '40'),
      { measure: { full: true }, refundId: undefined },
    ]);
    expect(decisions[2].next).toBeUndefined();
  });
});
