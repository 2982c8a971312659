import type { Client } from '../client.js';

/**
 * The organization's link parameters (`ref`, Rewardful's `via`, ...: GET /api/link-params), which
 * the server helpers honour without configuration. Read from GET /api/me once every five minutes
 * per key and service, shared by every capture in the process (the Fetch-style helper makes one a
 * request); when it cannot be read, the last list known (at first `ref`), tried again in 30 s.
 */
const TTL_MS = 5 * 60_000;
const RETRY_MS = 30_000;
const DEFAULT_LINK_PARAMS: readonly string[] = ['ref'];
/** A name that may be a link parameter (the API's rule): only such a query asks for the list. */
const LINK_PARAM = /^[a-z_][a-z0-9_-]{0,31}$/;

interface Entry {
  until: number;
  list: Promise<readonly string[]>;
  last: readonly string[];
}
const lists = new Map<string, Entry>();

/** The list for this key, within `waitMs` (else the last known): never rejects. */
export function linkParams(cacheKey: string, client: Client, waitMs: number): Promise<readonly string[]> {
  const now = Date.now();
  let entry = lists.get(cacheKey);
  if (!entry || entry.until <= now) {
    const last = entry?.last ?? DEFAULT_LINK_PARAMS;
    const fresh: Entry = { until: now + TTL_MS, last, list: Promise.resolve(last) };
    fresh.list = client.me().then(
      ({ organization }) => (fresh.last = organization.link_params),
      () => {
        fresh.until = Date.now() + RETRY_MS;
        return last;
      },
    );
    if (lists.size >= 100) lists.clear();
    lists.set(cacheKey, fresh);
    entry = fresh;
  }
  const { list, last } = entry;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(last), waitMs);
    void list.then((names) => {
      clearTimeout(timer);
      resolve(names);
    });
  });
}

/** Whether a URL may carry a referral: a non-empty value under a name that may be a link parameter (or `extra`). */
export function mayCarryReferral(url: URL, extra?: string): boolean {
  for (const [name, value] of url.searchParams)
    if (value.trim() !== '' && (LINK_PARAM.test(name) || name === extra)) return true;
  return false;
}

/** The first of `names` the URL carries, with its value as a slug; PartnerStack's `gspk` holds the partner key Base64-encoded. */
export function referralIn(url: URL, names: readonly string[]): { param: string; ref: string } | undefined {
  for (const name of names) {
    let value = (url.searchParams.get(name) ?? '').trim();
    if (!value) continue;
    if (name === 'gspk') {
      try {
        value = atob(value).trim();
      } catch {
        // not Base64: looked up as it is (and refused as malformed when it is no slug)
      }
    }
    return { param: name, ref: value.toLowerCase() };
  }
  return undefined;
}
