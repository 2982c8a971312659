import { Decimal } from 'decimal.js';

export type CommissionType = 'percent' | 'flat';

export interface CommissionRule {
  commission_type: CommissionType;
  commission_value: string | number;
}

/**
 * The program's rule applied to one conversion amount, in exact decimal arithmetic, rounded
 * half-up to 2 decimals (the one place rounding happens). A flat commission is paid per paid
 * conversion: a zero-amount conversion (a free trial start, say) earns nothing.
 */
export function computeCommission(rule: CommissionRule, amount: string | number): string {
  const value = new Decimal(rule.commission_value);
  const base = new Decimal(amount);
  const raw = rule.commission_type === 'percent' ? base.times(value).dividedBy(100) : base.greaterThan(0) ? value : new Decimal(0);
  return raw.toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2);
}
