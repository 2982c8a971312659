import { Decimal } from 'decimal.js';
import { InvalidInputError } from '../domain-errors.js';
import { roundToMinorUnit } from './money.js';

export type CommissionType = 'percent' | 'flat';

export interface CommissionRule {
  commission_type: CommissionType;
  commission_value: string | number;
}

/**
 * The largest percent commission: a commission never exceeds the charge, so with amounts bounded
 * by the contract (MAX_MONEY_INPUT) every commission stays a number JSON carries exactly.
 */
export const MAX_PERCENT_COMMISSION = 100;

/** 400 for a rule that could pay more than the charge (the contract bounds flat values itself). */
export function assertCommissionRule(rule: CommissionRule): void {
  if (rule.commission_type === 'percent' && new Decimal(rule.commission_value).greaterThan(MAX_PERCENT_COMMISSION)) {
    throw new InvalidInputError(`commission_value: a percent commission is at most ${MAX_PERCENT_COMMISSION}`);
  }
}

/**
 * The program's rule applied to one conversion amount, in exact decimal arithmetic, rounded
 * half-up to the currency's minor unit (money.ts). A flat commission is paid per paid
 * conversion: a zero-amount conversion (a free trial start, say) earns nothing.
 */
export function computeCommission(rule: CommissionRule, amount: string | number, currency: string): string {
  const value = new Decimal(rule.commission_value);
  const base = new Decimal(amount);
  const raw =
    rule.commission_type === 'percent'
      ? base.times(value).dividedBy(100)
      : base.greaterThan(0)
        ? value
        : new Decimal(0);
  return roundToMinorUnit(raw, currency);
}

/**
 * The commission still owed after `refunded` of `amount` was refunded: none when fully refunded,
 * else the original commission in proportion to what was kept, rounded once like every commission.
 */
export function commissionAfterRefund(
  grossCommission: string,
  amount: string,
  refunded: string,
  currency: string,
): string {
  const total = new Decimal(amount);
  const back = new Decimal(refunded);
  if (back.greaterThanOrEqualTo(total)) return roundToMinorUnit(new Decimal(0), currency);
  return roundToMinorUnit(new Decimal(grossCommission).times(total.minus(back)).dividedBy(total), currency);
}
