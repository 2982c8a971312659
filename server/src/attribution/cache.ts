import { LRUCache } from 'lru-cache';
import type { AttributionModel, CommissionTiers, FraudRules } from './program-rules.js';

export interface CachedAffiliate {
  id: string;
  program_id: string;
}

/** An affiliate's status (shared/spec/ledger.md): only `active` ones' links attribute. */
export type AffiliateStatus = 'active' | 'pending' | 'disabled';

export interface CachedClick {
  id: string;
  affiliate_id: string;
  program_id: string;
  occurred_at: Date;
}

export interface ProgramRule {
  commission_type: 'percent' | 'flat';
  commission_value: string;
  click_window_days: number;
  commission_window_months: number | null;
  currency: string;
  /** Days a sale's commission entry stays pending (modules/commissions/commission-lifecycle.ts). */
  hold_days: number;
  /** false: entries wait for the merchant's approval. */
  auto_approve: boolean;
  attribution_model: AttributionModel;
  /** A customer's paid conversions that earn; null: no cap by count. */
  commission_max_conversions: number | null;
  commission_tiers: CommissionTiers | null;
  fraud_rules: FraudRules;
}

/** What the rules need of an affiliate: its status, its own rate, and what self_referral compares with. */
export interface AffiliateRule {
  status: AffiliateStatus;
  commission_value: string | null;
  email: string;
  portal_sign_in_ip: string | null;
  portal_sign_in_user_agent: string | null;
}

/** Default of PROGRAM_RULE_CACHE_TTL_MS (config.ts): the safety net behind change notifications, for program rules and affiliates' statuses. */
export const PROGRAM_RULE_TTL_MS = 5_000;

/**
 * Bounded in-process caches for the hot paths (every click and conversion resolves a slug or a
 * cookie). What is cached and why it is safe:
 * - slug -> affiliate, and cookie id / click id -> click: no API call changes them in place, but
 *   several paths delete them, after which the same slug or id may be created again: erasing a
 *   partner (their slug replaced, aliases removed: `affiliate_links`), and the bulk deletions of an
 *   organization's rows: a test-data reset, an organization's deletion, an import's undo
 *   (`organization_rows`, which drops every slug and click cached under the organization). Each
 *   path drops the entries on its own instance after it commits, and every instance drops them
 *   when the change notification arrives (db/change-notifications.ts). Only found rows are cached,
 *   so a slug created later is found at once. These entries expire too, after `programRuleTtlMs`
 *   (or PROGRAM_RULE_TTL_MS when rules are not cached): the bound when a notification is lost.
 * - program -> commission rule and windows, and affiliate -> status: both can change (PATCH). The
 *   instance that changes one drops its entry at once, and every instance drops it when the change
 *   notification arrives (typically milliseconds later). Entries also expire after
 *   `programRuleTtlMs` (PROGRAM_RULE_CACHE_TTL_MS, 5 s by default): the bound when notifications
 *   are lost (a listener reconnecting) or not listened for (the embedded database).
 */
export class AttributionCache {
  // Sized to keep the process small (a few MB each when full): slugs are few and hot; a click is
  // typically looked up once or twice (signup, first sale), so only recently used ones are worth keeping.
  readonly affiliatesBySlug: LRUCache<string, CachedAffiliate>;
  readonly clicksByCookie: LRUCache<string, CachedClick>;
  readonly clicksById: LRUCache<string, CachedClick>;
  readonly programs: LRUCache<string, ProgramRule>;
  /** An affiliate's status, own rate and e-mail: change like program rules, and are dropped the same way. */
  readonly affiliateRules: LRUCache<string, AffiliateRule>;

  /** programRuleTtlMs 0: program rules are not cached (lru-cache's ttl 0 would mean "no expiry"). */
  constructor(readonly programRuleTtlMs: number = PROGRAM_RULE_TTL_MS) {
    this.programs = new LRUCache<string, ProgramRule>({ max: 5_000, ttl: programRuleTtlMs });
    this.affiliateRules = new LRUCache<string, AffiliateRule>({ max: 20_000, ttl: programRuleTtlMs });
    const ttl = programRuleTtlMs > 0 ? programRuleTtlMs : PROGRAM_RULE_TTL_MS;
    this.affiliatesBySlug = new LRUCache<string, CachedAffiliate>({ max: 20_000, ttl });
    this.clicksByCookie = new LRUCache<string, CachedClick>({ max: 10_000, ttl });
    this.clicksById = new LRUCache<string, CachedClick>({ max: 10_000, ttl });
  }

  static key(organizationId: string, value: string): string {
    return `${organizationId}:${value}`;
  }
}
