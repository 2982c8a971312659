import { Client } from '../client.js';
import { getCookieId } from '../cookie.js';
import { APIError } from '../errors.js';
import { isBotUserAgent } from './bots.js';
import { warner, type ServerLogger, type Warn } from './log.js';
import { linkParams, mayCarryReferral, referralIn } from './link-params.js';
import { attributionSetCookie } from './set-cookie.js';
import type { TrustProxy, Visit } from './visitor.js';

/**
 * The Fetch the server helpers call the service with (`globalThis.fetch` fits), spelled here
 * rather than imported so that this entry's declarations stand alone.
 */
export type ServerFetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal },
) => Promise<Response>;

export const DEFAULT_REFERRAL_PARAM = 'ref';
export const DEFAULT_REFERRAL_TIMEOUT_MS = 500;
/** The fallback cookie's lifetime, as the snippet gives it: the programs' default click window, 60 days. */
export const FALLBACK_MAX_AGE_SECONDS = 60 * 86_400;
/** What the snippet accepts as a slug; anything else is not sent (the service would answer 404). */
const SLUG = /^[a-z0-9-]{2,64}$/;
const MAX_URL = 2048;
const MAX_USER_AGENT = 1024;
const MAX_COOKIE_ID = 255;

export interface ReferralOptions {
  /** Organization API key (`svc-…`). */
  apiKey: string;
  /** Base address of the service, e.g. `https://affiliates.example.com`. */
  baseUrl: string;
  /**
   * One more referral query parameter, looked for first. Not needed for the organization's own
   * (GET /api/link-params: `ref`, and e.g. `via` after a Rewardful import), which are learned
   * from the service.
   */
  param?: string;
  /** Share the cookie across subdomains, e.g. `.example.com`; default: this host only. */
  cookieDomain?: string;
  /** Longest the page waits for the service, in milliseconds; default 500. Then the slug is stored. */
  timeoutMs?: number;
  /**
   * Read the visitor's address (and HTTPS) from `X-Forwarded-For` (`X-Forwarded-Proto`), written
   * by a proxy in front of the app: `true` for the left-most address, a number for that many
   * proxies. Default false: the connection's address.
   */
  trustProxy?: TrustProxy;
  /** Where failures are reported; default `console.warn`, once per kind of failure until the service answers again. */
  logger?: ServerLogger;
  /** A Fetch implementation; default `globalThis.fetch`. */
  fetch?: ServerFetch;
}

export interface ReferralCapture {
  /** The `Set-Cookie` value for this visit, or undefined: nothing to set. Never rejects. */
  setCookieFor(visit: Visit): Promise<string | undefined>;
  /** Whether this visit may carry a referral at all (no query: no call, nothing set). */
  hasReferral(visit: Visit): boolean;
  trustProxy: TrustProxy;
}

/** Checks the options once, when the app starts: a missing key or address is a TypeError then, never at a visit. */
export function referralCapture(options: ReferralOptions): ReferralCapture {
  if (!options || typeof options !== 'object')
    throw new TypeError('referral options are required: { apiKey, baseUrl }');
  const timeoutMs = options.timeoutMs ?? DEFAULT_REFERRAL_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new TypeError('timeoutMs: expected a positive number of milliseconds');
  const extraParam = options.param;
  if (extraParam !== undefined && (typeof extraParam !== 'string' || extraParam === ''))
    throw new TypeError('param: expected the name of the referral query parameter, e.g. "ref"');
  const trustProxy = options.trustProxy ?? false;
  // The client's transport, with one attempt bounded by the page's budget: a retry would hold the page.
  const client = new Client({
    apiKey: options.apiKey,
    baseUrl: options.baseUrl,
    timeoutMs,
    maxRetries: 0,
    fetch: options.fetch,
  });
  const log = warner(options.logger);
  const cookieOf = (value: string, maxAgeSeconds: number, visit: Visit) =>
    attributionSetCookie(value, { maxAgeSeconds, secure: visit.secure, domain: options.cookieDomain });

  return {
    trustProxy,
    hasReferral: (visit) => mayCarryReferral(visit.url, extraParam),
    async setCookieFor(visit) {
      if (isBotUserAgent(visit.userAgent)) return undefined;
      const started = Date.now();
      const names = await linkParams(`${options.baseUrl}\n${options.apiKey}`, client, timeoutMs);
      const found = referralIn(visit.url, extraParam ? [extraParam, ...names] : names);
      if (!found || !found.ref) return undefined;
      const { param, ref } = found;
      if (!SLUG.test(ref)) {
        log.warn('malformed', `ignoring malformed ${param} "${ref.slice(0, 80)}"`);
        return undefined;
      }
      const current = getCookieId(visit.cookieHeader);
      try {
        const { click } = await withDeadline(
          client.clicks.create({
            ref,
            landing_url: visit.url.href.slice(0, MAX_URL),
            referrer: visit.referrer?.slice(0, MAX_URL) || undefined,
            user_agent: visit.userAgent?.slice(0, MAX_USER_AGENT),
            ip: visit.ip,
            cookie_id: current && current.length <= MAX_COOKIE_ID ? current : undefined,
          }),
          // What is left of the page's budget once the list was read (at once, when cached).
          Math.max(1, timeoutMs - (Date.now() - started)),
        );
        log.recovered();
        // Kept (the program's first_click model, or a click flood): the cookie stays as it is, lifetime included.
        if (click.kept_earlier_click && click.cookie_id === current) return undefined;
        return cookieOf(click.cookie_id, click.cookie_max_age_seconds ?? FALLBACK_MAX_AGE_SECONDS, visit);
      } catch (err) {
        return fallback(err, ref, param, log.warn, (slug) => cookieOf(slug, FALLBACK_MAX_AGE_SECONDS, visit));
      }
    },
  };
}

/**
 * As the snippet does: when the service judged the referral (400, 404: unknown or malformed
 * slug), nothing is stored and an earlier cookie stays; when it could not answer (slow, down, a
 * 5xx, a 429, or a key it refused), the slug itself is stored, which attributes later without a
 * click window, so that the visitor is not lost.
 */
function fallback(
  err: unknown,
  ref: string,
  param: string,
  warn: Warn,
  slugCookie: (slug: string) => string,
): string | undefined {
  if (err instanceof APIError && (err.status === 400 || err.status === 404)) {
    warn(`rejected-${err.status}`, `${param} "${ref}" not tracked: ${err.message}`);
    return undefined;
  }
  const reason =
    err instanceof APIError ? `HTTP ${err.status}: ${err.message}` : err instanceof Error ? err.message : String(err);
  warn(
    err instanceof APIError ? `status-${err.status}` : 'unreachable',
    `click for ${param} "${ref}" not recorded (${reason}); the cookie holds the slug instead`,
  );
  return slugCookie(ref);
}

class DeadlineError extends Error {}

/** The transport's own timeout bounds a well-behaved fetch; this bounds any other (one that ignores its AbortSignal). */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineError(`no answer within ${ms} ms`)), ms + 20);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on the promise's own rejection, unchanged
        reject(err);
      },
    );
  });
}
