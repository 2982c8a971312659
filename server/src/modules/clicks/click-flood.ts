import { LRUCache } from 'lru-cache';

/** More than this many clicks within the window from one address on one link are a flood (shared/spec/ledger.md). */
export const CLICK_FLOOD_LIMIT = 10;
export const CLICK_FLOOD_WINDOW_MS = 60_000;

/** A click as the flood rule sees it: counted, or the surplus answered with the window's first click. */
export type FloodVerdict = { suppressed: false } | { suppressed: true; firstCookieId: string };

/**
 * The click_flood rule's sliding windows: per (organization, link, address), the counted clicks of
 * the last 60 seconds (by occurred_at). An 11th click within 60 seconds of the oldest counted one is
 * surplus. Kept in this process's memory, so that the hot path makes no extra round trip: exact
 * for one instance; behind a load balancer each instance counts the clicks it receives (a balancer
 * with client-address affinity keeps it exact). Bounded: at most `maxKeys` addresses are tracked,
 * the least recently seen dropped first.
 */
export class ClickFloodWindows {
  private readonly windows: LRUCache<string, { at: number; cookieId: string }[]>;

  constructor(maxKeys = 50_000) {
    this.windows = new LRUCache({ max: maxKeys, ttl: CLICK_FLOOD_WINDOW_MS, updateAgeOnGet: false });
  }

  observe(organizationId: string, affiliateId: string, address: string, at: Date, cookieId: string): FloodVerdict {
    const key = `${organizationId}:${affiliateId}:${address}`;
    const now = at.getTime();
    const counted = (this.windows.get(key) ?? []).filter((c) => c.at > now - CLICK_FLOOD_WINDOW_MS && c.at <= now);
    if (counted.length >= CLICK_FLOOD_LIMIT) {
      this.windows.set(key, counted);
      return { suppressed: true, firstCookieId: counted[0].cookieId };
    }
    counted.push({ at: now, cookieId });
    this.windows.set(key, counted);
    return { suppressed: false };
  }
}
