import { isIP } from 'node:net';
import type { Request, RequestHandler } from 'express';
import { TooManyRequestsError } from './errors.js';

/** What a limiter decided about one request. */
export interface RateLimitDecision {
  allowed: boolean;
  /** Requests allowed per window. */
  limit: number;
  /** Requests left in the current window after this one (0 when refused). */
  remaining: number;
  /** When refused: seconds until a request under this key would be allowed again; else 0. */
  retryAfterSeconds: number;
}

/**
 * Counts requests per key (an API key's hash, a client address). Implemented on
 * rate-limiter-flexible's stores (rate-limit-flexible.ts): memory per instance, or Redis or
 * PostgreSQL shared by every instance, which is why `hit` is asynchronous.
 */
export interface RateLimiter {
  hit(key: string): Promise<RateLimitDecision>;
}

/**
 * The rate-limit key for a client address. IPv4-mapped IPv6 addresses count as their IPv4
 * address, and IPv6 addresses are grouped by /64, since one subscriber usually holds a whole /64
 * and could otherwise rotate through addresses to escape the limit.
 */
export function clientAddressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  const version = isIP(address);
  // Not an address: only what a trusted proxy's X-Forwarded-For said, bounded in length for the
  // store's key column (255 characters), since a client may have written it.
  if (version === 0) return address.slice(0, 100);
  if (version === 4) return address;
  return `${expandIpv6(address).slice(0, 4).join(':')}::/64`;
}

function expandIpv6(address: string): string[] {
  const withoutZone = address.split('%')[0];
  const [head, tail] = withoutZone.includes('::') ? withoutZone.split('::') : [withoutZone, undefined];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const missing = tail === undefined ? 0 : 8 - headParts.length - tailParts.length;
  return [...headParts, ...Array<string>(missing).fill('0'), ...tailParts].map((part) => (parseInt(part, 16) || 0).toString(16));
}

export interface RateLimitMiddlewareOptions {
  /** Namespaces the key, so that several limits can share one limiter. */
  scope: string;
  /** The client key; default: the client address (honouring Express's `trust proxy`). */
  key?: (req: Request) => string;
}

/** The per-API-key limit on /api counts under `api-key:<hash of the key>`. */
export const API_KEY_RATE_LIMIT_SCOPE = 'api-key';

/** What a request's rate limit adds to its response: the budget headers, and the refusal if any. */
export interface RateLimitOutcome {
  headers: [name: string, value: string][];
  refusal?: TooManyRequestsError;
}

/**
 * Counts one request under `key`. The budget is advertised in RateLimit-Limit /
 * RateLimit-Remaining; a refusal is 429 in the error envelope with Retry-After. If the limiter
 * itself fails, the request is let through: tracking must not stop because of the limiter (a
 * shared store that is down is normally covered by the in-memory insurance limiter first, see
 * rate-limit-stores.ts; this is the last resort). Shared by the middleware below and the hot routes.
 */
export async function countRequest(limiter: RateLimiter, key: string, onUnavailable: (err: unknown) => void): Promise<RateLimitOutcome> {
  let decision: RateLimitDecision;
  try {
    decision = await limiter.hit(key);
  } catch (err) {
    onUnavailable(err);
    return { headers: [] };
  }
  const headers: RateLimitOutcome['headers'] =
    decision.limit > 0
      ? [
          ['RateLimit-Limit', String(decision.limit)],
          ['RateLimit-Remaining', String(decision.remaining)],
        ]
      : [];
  return decision.allowed ? { headers } : { headers, refusal: new TooManyRequestsError(decision.retryAfterSeconds) };
}

/** Express middleware of countRequest. CORS preflights are not counted. */
export function rateLimit(limiter: RateLimiter, options: RateLimitMiddlewareOptions): RequestHandler {
  const keyOf = options.key ?? ((req: Request) => clientAddressKey(req.ip ?? req.socket.remoteAddress));
  return (req, res, next) => {
    if (req.method === 'OPTIONS') return next();
    countRequest(limiter, `${options.scope}:${keyOf(req)}`, (err) => req.log?.warn({ err }, 'rate limiter unavailable; request allowed')).then(
      ({ headers, refusal }) => {
        for (const [name, value] of headers) res.setHeader(name, value);
        next(refusal);
      },
      next,
    );
  };
}
