import { isIP } from 'node:net';
import type { PipelineRequest, Stage } from './pipeline.js';
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
  return [...headParts, ...Array<string>(missing).fill('0'), ...tailParts].map((part) =>
    (parseInt(part, 16) || 0).toString(16),
  );
}

export interface RateLimitOptions {
  /** Namespaces the key, so that several limits can share one limiter. */
  scope: string;
  /** The client key; default: the client address (honouring Express's `trust proxy`). */
  key?: (req: PipelineRequest & { ip?: string }) => string;
  /** Path prefixes it applies to; every request when absent. */
  paths?: readonly string[];
}

/** The per-API-key limit on /api counts under `api-key:<hash of the key>`. */
export const API_KEY_RATE_LIMIT_SCOPE = 'api-key';

/**
 * Counts one request under its key. The budget is advertised in RateLimit-Limit /
 * RateLimit-Remaining; a refusal is 429 in the error envelope with Retry-After. If the limiter
 * itself fails, the request is let through: tracking must not stop because of the limiter (a
 * shared store that is down is normally covered by the in-memory insurance limiter first, see
 * rate-limit-stores.ts; this is the last resort). CORS preflights are not counted.
 */
export function rateLimitStage(limiter: RateLimiter, options: RateLimitOptions): Stage {
  const keyOf =
    options.key ?? ((req: PipelineRequest & { ip?: string }) => clientAddressKey(req.ip ?? req.socket.remoteAddress));
  return {
    name: `rate limit (${options.scope})`,
    paths: options.paths,
    async run(req, _res, headers) {
      if (req.method === 'OPTIONS') return;
      let decision: RateLimitDecision;
      try {
        decision = await limiter.hit(`${options.scope}:${keyOf(req)}`);
      } catch (err) {
        req.log?.warn({ err }, 'rate limiter unavailable; request allowed');
        return;
      }
      if (decision.limit > 0) {
        headers.setHeader('RateLimit-Limit', String(decision.limit));
        headers.setHeader('RateLimit-Remaining', String(decision.remaining));
      }
      if (!decision.allowed) throw new TooManyRequestsError(decision.retryAfterSeconds);
    },
  };
}
