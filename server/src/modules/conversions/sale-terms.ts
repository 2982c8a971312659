import { LRUCache } from 'lru-cache';
import type { ProgramRule } from '../../attribution/cache.js';
import {
  applicableRate,
  previousMonthUtc,
  type AppliedRate,
  type CommissionTiers,
} from '../../attribution/program-rules.js';
import type { AttributionResolver } from '../referrals/attribution-resolver.js';
import { holdReasons, type HoldReason } from '../../charges/fraud.js';

/** What the terms of a sale read beyond the resolver's caches: a tier's metric, a click's facts. */
export interface SaleTermsSources {
  /** The affiliate's metric over [from, to) (conversions repository). */
  tierMetric(
    organizationId: string,
    affiliateId: string,
    metric: CommissionTiers['metric'],
    currency: string,
    from: Date,
    to: Date,
  ): Promise<string>;
  /** When and from where a click came (clicks repository); undefined when there is no such click. */
  clickFacts(
    organizationId: string,
    clickId: string,
  ): Promise<{ occurred_at: Date; ip: string | null; user_agent: string | null } | undefined>;
}

/** A tier's metric is of a past month: it changes only by late reports, so it is kept this long per instance. */
const TIER_METRIC_TTL_MS = 5 * 60_000;

export interface SaleParties {
  organizationId: string;
  program: ProgramRule;
  affiliateId: string;
  clickId: string | null;
  customerEmail: string | null | undefined;
  occurredAt: Date;
}

/**
 * The terms a sale is recorded with, beyond the charge itself (charges/decision.ts): the rate that
 * applies (the affiliate's own, a tier, or the program's: attribution/program-rules.ts) and the
 * fraud signals that hold its commission (charges/fraud.ts). The facts are gathered here, from the
 * resolver's caches and, only for the rules that are on and can apply, from PostgreSQL (a tier's
 * metric once per affiliate and month, a click's facts once per click: both cached).
 */
export class SaleTerms {
  private readonly tierMetrics = new LRUCache<string, string>({ max: 20_000, ttl: TIER_METRIC_TTL_MS });
  private readonly clicks = new LRUCache<string, { occurred_at: Date; ip: string | null; user_agent: string | null }>({
    max: 10_000,
  });

  constructor(
    private readonly resolver: Pick<AttributionResolver, 'affiliateRule'>,
    private readonly sources: SaleTermsSources,
  ) {}

  /** The organization's rows were deleted in bulk (db/change-notifications.ts `organization_rows`): its clicks' facts are dropped. */
  forgetOrganization(organizationId: string): void {
    const prefix = `${organizationId}:`;
    for (const key of [...this.clicks.keys()]) if (key.startsWith(prefix)) this.clicks.delete(key);
  }

  /** Notifications may have been missed: every click's facts are read again. */
  forgetAll(): void {
    this.clicks.clear();
  }

  async of(sale: SaleParties): Promise<{ rate: AppliedRate; holds: HoldReason[] | undefined }> {
    const { program, affiliateId, organizationId } = sale;
    const affiliate = await this.resolver.affiliateRule(organizationId, affiliateId);
    const ownRate = affiliate?.commission_value ?? null;
    const metric =
      ownRate === null && program.commission_tiers
        ? await this.metric(organizationId, affiliateId, program, sale.occurredAt)
        : undefined;
    const rate = applicableRate(program, ownRate, metric);
    const rules = program.fraud_rules;
    const email = sale.customerEmail || undefined;
    const signIn = affiliate?.portal_sign_in_ip
      ? { ip: affiliate.portal_sign_in_ip, userAgent: affiliate.portal_sign_in_user_agent }
      : undefined;
    // A click's facts are read only when a rule on needs them: fast_conversion, or self_referral against a known portal sign-in.
    const needsClick =
      sale.clickId !== null && (rules.fast_conversion || (rules.self_referral && signIn !== undefined));
    if (!email && !needsClick) return { rate, holds: undefined };
    const click = needsClick ? await this.click(organizationId, sale.clickId!) : undefined;
    const holds = holdReasons(rules, {
      customerEmail: email,
      affiliateEmail: affiliate?.email,
      click: click && { occurredAt: new Date(click.occurred_at), ip: click.ip, userAgent: click.user_agent },
      partnerSignIn: signIn,
      occurredAt: sale.occurredAt,
    });
    return { rate, holds: holds.length > 0 ? holds : undefined };
  }

  private async metric(organizationId: string, affiliateId: string, program: ProgramRule, at: Date): Promise<string> {
    const month = previousMonthUtc(at);
    const tiers = program.commission_tiers!;
    const key = `${affiliateId}:${tiers.metric}:${program.currency}:${month.key}`;
    let value = this.tierMetrics.get(key);
    if (value === undefined) {
      value = await this.sources.tierMetric(
        organizationId,
        affiliateId,
        tiers.metric,
        program.currency,
        month.from,
        month.to,
      );
      this.tierMetrics.set(key, value);
    }
    return value;
  }

  private async click(organizationId: string, clickId: string) {
    const key = `${organizationId}:${clickId}`;
    let facts = this.clicks.get(key);
    if (!facts) {
      facts = await this.sources.clickFacts(organizationId, clickId);
      if (facts) this.clicks.set(key, facts);
    }
    return facts;
  }
}
