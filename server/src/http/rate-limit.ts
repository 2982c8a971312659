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
 * Counts requests per key (a client address, usually). The in-memory implementation below limits
 * per instance; a shared store (Redis, PostgreSQL) can implement the same interface to limit
 * across instances, which is why `hit` is asynchronous.
 */
export interface RateLimiter {
  hit(key: string): Promise<RateLimitDecision>;
}

export interface SlidingWindowOptions {
  /** Requests allowed per window and key. 0 disables limiting. */
  limit: number;
  windowMs: number;
  /** Keys tracked at most; beyond it the least recently started windows are forgotten. */
  maxKeys?: number;
  /** Injectable clock (milliseconds), for tests. */
  now?: () => number;
}

interface WindowCounts {
  /** Start of the current fixed window (ms, a multiple of windowMs). */
  start: number;
  current: number;
  previous: number;
}

/**
 * Sliding-window counter: the count of the current fixed window plus the previous window's count
 * weighted by how much of it still overlaps the sliding window. It avoids the double burst a fixed
 * window allows at its boundary, with O(1) memory per key. Refused requests are not counted, so a
 * client that backs off for Retry-After seconds gets through.
 */
export class InMemorySlidingWindowRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, WindowCounts>();
  private readonly maxKeys: number;
  private readonly now: () => number;
  private lastSweep = 0;

  constructor(private readonly options: SlidingWindowOptions) {
    if (!(options.windowMs > 0)) throw new Error('rate limit window must be positive');
    if (!(options.limit >= 0)) throw new Error('rate limit must be >= 0');
    this.maxKeys = options.maxKeys ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  hit(key: string): Promise<RateLimitDecision> {
    return Promise.resolve(this.hitSync(key));
  }

  hitSync(key: string): RateLimitDecision {
    const { limit, windowMs } = this.options;
    if (limit === 0) return { allowed: true, limit, remaining: 0, retryAfterSeconds: 0 };
    const now = this.now();
    const start = Math.floor(now / windowMs) * windowMs;
    this.sweep(start);

    let counts = this.windows.get(key);
    if (!counts) {
      if (this.windows.size >= this.maxKeys) this.evictOldest();
      counts = { start, current: 0, previous: 0 };
      this.windows.set(key, counts);
    } else if (counts.start !== start) {
      counts.previous = counts.start === start - windowMs ? counts.current : 0;
      counts.current = 0;
      counts.start = start;
    }

    const elapsed = now - start;
    const previousWeight = (windowMs - elapsed) / windowMs;
    const estimate = counts.previous * previousWeight + counts.current;
    if (estimate + 1 <= limit) {
      counts.current += 1;
      return { allowed: true, limit, remaining: Math.max(0, Math.floor(limit - estimate - 1)), retryAfterSeconds: 0 };
    }
    return { allowed: false, limit, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(this.waitMs(counts, elapsed) / 1000)) };
  }

  /** Milliseconds until `previous * weight(t) + current + 1 <= limit` holds again. */
  private waitMs(counts: WindowCounts, elapsed: number): number {
    const { limit, windowMs } = this.options;
    if (counts.current + 1 <= limit) {
      // Within this window, once enough of the previous window has slid out.
      const t = windowMs * (1 - (limit - 1 - counts.current) / counts.previous);
      return Math.max(0, t - elapsed);
    }
    // Only in the next window, where this window's count becomes the weighted "previous".
    const t = windowMs * (1 - (limit - 1) / counts.current);
    return windowMs - elapsed + Math.max(0, t);
  }

  /** Drops keys whose windows can no longer count (older than the previous window), once per window. */
  private sweep(start: number): void {
    if (start === this.lastSweep) return;
    this.lastSweep = start;
    const horizon = start - this.options.windowMs;
    for (const [key, counts] of this.windows) {
      if (counts.start < horizon) this.windows.delete(key);
    }
  }

  private evictOldest(): void {
    // Map iteration follows insertion order: the first keys are the longest tracked.
    const excess = this.windows.size - this.maxKeys + 1;
    let removed = 0;
    for (const key of this.windows.keys()) {
      if (removed++ >= Math.max(excess, Math.ceil(this.maxKeys / 100))) break;
      this.windows.delete(key);
    }
  }

  /** Keys currently tracked (for tests and metrics). */
  get size(): number {
    return this.windows.size;
  }
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
  if (isIP(address) !== 6) return address;
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
 * itself fails (a shared store down), the request is let through: tracking must not stop because
 * the limiter's store is unavailable. Shared by the middleware below and the hot routes.
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
