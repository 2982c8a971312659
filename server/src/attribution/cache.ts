import { LRUCache } from 'lru-cache';

export interface CachedAffiliate {
  id: string;
  program_id: string;
}

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
}

export const PROGRAM_RULE_TTL_MS = 5_000;

/**
 * Bounded in-process caches for the hot paths (every click and conversion resolves a slug or a
 * cookie). What is cached and why it is safe:
 * - slug -> affiliate, and cookie id / click id -> click: immutable once created (the API has no
 *   way to change or delete them), so entries never go stale; only found rows are cached, so a
 *   slug created later is found at once.
 * - program -> commission rule and windows: a program can change (PATCH), so entries live
 *   PROGRAM_RULE_TTL_MS (5 s) and this instance drops its entry on its own updates; other
 *   instances see a change within the TTL.
 */
export class AttributionCache {
  // Sized to keep the process small (a few MB each when full): slugs are few and hot; a click is
  // typically looked up once or twice (signup, first sale), so only recently used ones are worth keeping.
  readonly affiliatesBySlug = new LRUCache<string, CachedAffiliate>({ max: 20_000 });
  readonly clicksByCookie = new LRUCache<string, CachedClick>({ max: 10_000 });
  readonly clicksById = new LRUCache<string, CachedClick>({ max: 10_000 });
  readonly programs = new LRUCache<string, ProgramRule>({ max: 5_000, ttl: PROGRAM_RULE_TTL_MS });

  static key(organizationId: string, value: string): string {
    return `${organizationId}:${value}`;
  }
}
