import { Decimal } from 'decimal.js';
import type { CommissionType } from './commission.js';

/**
 * A program's rules beyond its base rate (shared/spec/ledger.md, "Program rules and fraud
 * signals"), as pure functions: which rate a sale earns (affiliate override, tier, program), the
 * month a tier is measured on, and a program's fraud rules after a partial change.
 */

export type AttributionModel = 'last_click' | 'first_click';

export interface CommissionTier {
  /** The metric's value from which this tier applies (customers: a count; revenue: an amount). */
  from: number;
  commission_value: number;
}

export interface CommissionTiers {
  metric: 'customers' | 'revenue';
  tiers: CommissionTier[];
}

export interface FraudRules {
  self_referral: boolean;
  disposable_email: boolean;
  click_flood: boolean;
  fast_conversion: boolean;
}

export const DEFAULT_FRAUD_RULES: FraudRules = {
  self_referral: true,
  disposable_email: true,
  click_flood: true,
  fast_conversion: false,
};

/** A program's fraud rules after a change naming some of them: the others keep their value. */
export function withFraudRules(
  current: FraudRules | null | undefined,
  change: Partial<FraudRules> | undefined,
): FraudRules {
  return { ...DEFAULT_FRAUD_RULES, ...(current ?? {}), ...(change ?? {}) };
}

/** The rate a sale's commission was computed with, recorded on its entry. */
export interface AppliedRate {
  type: CommissionType;
  value: string;
  source: 'program' | 'tier' | 'affiliate';
}

/**
 * The calendar month (UTC) before the one `at` falls in: a tier is chosen by what the affiliate
 * brought then, so a tier reached in the middle of a month pays from the next month on.
 */
export function previousMonthUtc(at: Date): { from: Date; to: Date; key: string } {
  const to = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const from = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1));
  return { from, to, key: from.toISOString().slice(0, 7) };
}

/** The highest tier whose `from` the metric reaches; undefined below every tier. */
export function tierFor(tiers: CommissionTiers, metric: string | number): CommissionTier | undefined {
  const value = new Decimal(metric);
  let best: CommissionTier | undefined;
  for (const tier of tiers.tiers) {
    if (value.gte(tier.from) && (!best || tier.from > best.from)) best = tier;
  }
  return best;
}

/**
 * The rate a sale earns: the affiliate's own `commission_value` when set (it overrides the program
 * and its tiers); else the tier the affiliate's previous month reached (`metric`: undefined when the
 * program has no tiers); else the program's.
 */
export function applicableRate(
  program: {
    commission_type: CommissionType;
    commission_value: string | number;
    commission_tiers: CommissionTiers | null;
  },
  affiliateValue: string | null,
  metric: string | number | undefined,
): AppliedRate {
  const type = program.commission_type;
  if (affiliateValue != null) return { type, value: new Decimal(affiliateValue).toString(), source: 'affiliate' };
  const tier = program.commission_tiers && metric !== undefined ? tierFor(program.commission_tiers, metric) : undefined;
  if (tier) return { type, value: new Decimal(tier.commission_value).toString(), source: 'tier' };
  return { type, value: new Decimal(program.commission_value).toString(), source: 'program' };
}
