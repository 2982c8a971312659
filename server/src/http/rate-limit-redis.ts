import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { InMemorySlidingWindowRateLimiter, type RateLimitDecision, type RateLimiter } from './rate-limit.js';

/**
 * The same sliding-window counter as the in-memory limiter (current fixed window plus the
 * previous one weighted by its remaining overlap), evaluated atomically inside Redis so that every
 * instance of the service shares one budget per key. The clock is Redis's own (TIME), so instances
 * with skewed clocks still agree on window boundaries. Both counters live under one hash tag, so
 * the script stays on one slot in a Redis Cluster. Refused requests are not counted.
 *
 * Returns { allowed (1/0), current count, previous count, elapsed ms in the current window }.
 */
const SLIDING_WINDOW_SCRIPT = `
local limit = tonumber(ARGV[1])
local window_ms = tonumber(ARGV[2])
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local start = now_ms - (now_ms % window_ms)
local elapsed = now_ms - start
local current_key = KEYS[1] .. ':' .. start
local previous_key = KEYS[1] .. ':' .. (start - window_ms)
local current = tonumber(redis.call('GET', current_key) or '0')
local previous = tonumber(redis.call('GET', previous_key) or '0')
local estimate = previous * (window_ms - elapsed) / window_ms + current
if estimate + 1 <= limit then
  current = redis.call('INCR', current_key)
  redis.call('PEXPIRE', current_key, window_ms * 2 + 1000)
  return {1, current, previous, elapsed}
end
return {0, current, previous, elapsed}
`;

interface RedisWithScript {
  slidingWindowHit(key: string, limit: number, windowMs: number): Promise<[number, number, number, number]>;
}

export interface RedisRateLimiterOptions {
  /** Requests allowed per window and key. 0 disables limiting. */
  limit: number;
  windowMs: number;
  /** Prefix of every Redis key this limiter writes. */
  prefix?: string;
}

/**
 * Milliseconds until `previous * weight(t) + current + 1 <= limit` holds again, for a refused
 * request at `elapsed` ms into the current window.
 */
export function slidingWindowWaitMs(limit: number, windowMs: number, current: number, previous: number, elapsed: number): number {
  if (current + 1 <= limit && previous > 0) {
    const t = windowMs * (1 - (limit - 1 - current) / previous);
    return Math.max(0, t - elapsed);
  }
  const t = current > 0 ? windowMs * (1 - (limit - 1) / current) : 0;
  return windowMs - elapsed + Math.max(0, t);
}

/** A RateLimiter whose counts live in Redis: one budget per key across every instance. */
export class RedisSlidingWindowRateLimiter implements RateLimiter {
  private readonly redis: RedisWithScript;
  private readonly prefix: string;

  constructor(
    redis: Redis,
    private readonly options: RedisRateLimiterOptions,
  ) {
    if (!(options.windowMs > 0)) throw new Error('rate limit window must be positive');
    if (!(options.limit >= 0)) throw new Error('rate limit must be >= 0');
    this.prefix = options.prefix ?? 'svc:rl';
    if (!(redis as unknown as Partial<RedisWithScript>).slidingWindowHit) {
      redis.defineCommand('slidingWindowHit', { numberOfKeys: 1, lua: SLIDING_WINDOW_SCRIPT });
    }
    this.redis = redis as unknown as RedisWithScript;
  }

  async hit(key: string): Promise<RateLimitDecision> {
    const { limit, windowMs } = this.options;
    if (limit === 0) return { allowed: true, limit, remaining: 0, retryAfterSeconds: 0 };
    // The hash tag keeps the current and previous windows of one key on one cluster slot.
    const [allowed, current, previous, elapsed] = await this.redis.slidingWindowHit(`${this.prefix}:{${key}}`, limit, windowMs);
    if (allowed === 1) {
      const estimate = (previous * (windowMs - elapsed)) / windowMs + current;
      return { allowed: true, limit, remaining: Math.max(0, Math.floor(limit - estimate)), retryAfterSeconds: 0 };
    }
    const waitMs = slidingWindowWaitMs(limit, windowMs, current, previous, elapsed);
    return { allowed: false, limit, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
  }
}

/**
 * A Redis connection for rate limiting. It never queues commands while disconnected and gives up on
 * a command after `commandTimeoutMs`: the rate-limit middleware then lets the request through, so
 * an unavailable Redis never stops tracking (and never makes requests wait on it).
 */
export function connectRateLimitRedis(url: string, logger: Logger, commandTimeoutMs = 250): Redis {
  // Loaded only when REDIS_URL is set: an instance counting in memory does not carry the client.
  const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const redis = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 200, 5_000),
    lazyConnect: false,
  });
  let lastReported = 0;
  redis.on('error', (err: Error) => {
    // Reconnection attempts repeat the same error; report it at most every 30 s.
    const now = Date.now();
    if (now - lastReported > 30_000) {
      lastReported = now;
      logger.warn({ err: { message: err.message } }, 'rate-limit Redis unavailable; limits are not enforced until it is back');
    }
  });
  return redis;
}

export interface RateLimiterFactory {
  /** A limiter for one kind of limit (per API key, per client address on public endpoints…). */
  create(options: { limit: number; windowSeconds: number; prefix: string }): RateLimiter;
  /** Which store counts: `redis` holds across instances, `memory` per instance. */
  readonly store: 'redis' | 'memory';
  close(): Promise<void>;
}

/**
 * Picks the store from the configuration: Redis when REDIS_URL is set (shared by every instance),
 * else memory (per instance: right for the embedded default and a single instance).
 */
export function createRateLimiterFactory(config: { REDIS_URL?: string }, logger: Logger): RateLimiterFactory {
  if (!config.REDIS_URL) {
    return {
      store: 'memory',
      create: ({ limit, windowSeconds }) => new InMemorySlidingWindowRateLimiter({ limit, windowMs: windowSeconds * 1000 }),
      close: async () => {},
    };
  }
  const redis = connectRateLimitRedis(config.REDIS_URL, logger);
  return {
    store: 'redis',
    create: ({ limit, windowSeconds, prefix }) => new RedisSlidingWindowRateLimiter(redis, { limit, windowMs: windowSeconds * 1000, prefix }),
    close: async () => {
      try {
        await redis.quit();
      } catch {
        redis.disconnect();
      }
    },
  };
}
