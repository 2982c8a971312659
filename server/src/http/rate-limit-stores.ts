import { createRequire } from 'node:module';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis } from 'rate-limiter-flexible';
import { Db } from '../db/sql.js';
import type { RateLimiter } from './rate-limit.js';
import { LeasedRateLimiter, checkOptions, memoryRateLimiter } from './rate-limit-flexible.js';

/** Created by the baseline migration (baseline/tenancy.ts), in rate-limiter-flexible's layout. */
export const RATE_LIMIT_TABLE = 'rate_limits';

type LimiterOptions = ConstructorParameters<typeof RateLimiterMemory>[0];

/** Where rate limits are counted: `redis` and `postgres` hold across instances, `memory` per instance. */
export type RateLimitStore = 'redis' | 'postgres' | 'memory';

export interface RateLimiterFactory {
  /** A limiter for one kind of limit (per API key, per client address on public endpoints…). */
  create(options: { limit: number; windowSeconds: number; prefix: string }): RateLimiter;
  readonly store: RateLimitStore;
  close(): Promise<void>;
}

/**
 * Picks the store from the configuration: Redis when REDIS_URL is set; else, on a real PostgreSQL
 * (DATABASE_URL set), the service's own database, so that several instances share one budget
 * without Redis; else (the embedded database, one instance) memory.
 *
 * A shared store is used through leases (LeasedRateLimiter), which keep its round trips off the
 * request path. When the store fails, rate-limiter-flexible's insurance limiter counts in this
 * instance's memory until it is back: limiting degrades to per instance, and tracking never stops
 * for the limiter (a warning is logged, at most every 30 s).
 */
export function createRateLimiterFactory(
  config: { REDIS_URL?: string; DATABASE_URL?: string },
  logger: Logger,
  orm?: MikroORM,
): RateLimiterFactory {
  const warnFallback = throttled(() =>
    logger.warn('rate-limit store unavailable; counting per instance in memory until it is back'),
  );
  const insurance = (options: LimiterOptions) => new InsuranceLimiter(options, warnFallback);

  if (config.REDIS_URL) {
    const redis = connectRateLimitRedis(config.REDIS_URL, logger);
    return {
      store: 'redis',
      create: ({ limit, windowSeconds, prefix }) => {
        checkOptions({ limit, windowSeconds });
        const options = { points: Math.max(1, limit), duration: windowSeconds, keyPrefix: prefix };
        // Not ready (disconnected): the insurance limiter at once, rather than a command timing out.
        const store = new RateLimiterRedis({
          ...options,
          storeClient: redis,
          rejectIfRedisNotReady: true,
          insuranceLimiter: insurance(options),
        });
        return new LeasedRateLimiter(store, limit);
      },
      close: async () => {
        try {
          await redis.quit();
        } catch {
          redis.disconnect();
        }
      },
    };
  }

  if (config.DATABASE_URL && orm) {
    const storeClient = postgresStoreClient(orm);
    return {
      store: 'postgres',
      create: ({ limit, windowSeconds, prefix }) => {
        checkOptions({ limit, windowSeconds });
        const options = { points: Math.max(1, limit), duration: windowSeconds, keyPrefix: prefix };
        const store = new RateLimiterPostgres({
          ...options,
          storeClient,
          storeType: 'pool',
          tableName: RATE_LIMIT_TABLE,
          // The table comes from a committed migration: nothing is created at run time.
          tableCreated: true,
          // Every 5 minutes, rows whose window ended an hour ago are deleted (the table stays small).
          clearExpiredByTimeout: true,
          insuranceLimiter: insurance(options),
        });
        return new LeasedRateLimiter(store, limit);
      },
      // The limiter's statements run on the ORM's pool, which main.ts closes.
      close: async () => {},
    };
  }

  return {
    store: 'memory',
    create: ({ limit, windowSeconds, prefix }) => memoryRateLimiter({ limit, windowSeconds, prefix }),
    close: async () => {},
  };
}

/**
 * rate-limiter-flexible's PostgreSQL limiter on the service's pool (db/sql.ts), so that it adds
 * no connections of its own. The library names its statements (server-side prepared statements);
 * the name is dropped here because a named statement lives on one server connection, which
 * PgBouncer in transaction mode does not keep (ARCHITECTURE: no state on a connection).
 */
function postgresStoreClient(orm: MikroORM) {
  const db = Db.of(orm);
  return {
    query: (statement: { text: string; values?: unknown[] }) => db.library(statement.text, statement.values),
  };
}

/** The in-memory limiter a shared store falls back to; its use is what reports the outage. */
class InsuranceLimiter extends RateLimiterMemory {
  constructor(
    options: LimiterOptions,
    private readonly onUse: () => void,
  ) {
    super(options);
  }

  override consume(...args: Parameters<RateLimiterMemory['consume']>): ReturnType<RateLimiterMemory['consume']> {
    this.onUse();
    return super.consume(...args);
  }
}

/** fn at most once per interval: an outage repeats the same news on every request. */
function throttled(fn: () => void, intervalMs = 30_000): () => void {
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    fn();
  };
}

/**
 * A Redis connection for rate limiting. It never queues commands while disconnected and gives up on
 * a command after `commandTimeoutMs`: the insurance limiter then counts the request, so an
 * unavailable Redis never stops tracking (and never makes requests wait on it).
 */
export function connectRateLimitRedis(url: string, logger: Logger, commandTimeoutMs = 250): Redis {
  // Loaded only when REDIS_URL is set: an instance counting elsewhere does not carry the client.
  const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const redis = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 200, 5_000),
    lazyConnect: false,
  });
  // Reconnection attempts repeat the same error; report it at most every 30 s.
  const report = throttled(() =>
    logger.warn(
      { err: { message: lastError } },
      'rate-limit Redis unavailable; counting per instance until it is back',
    ),
  );
  let lastError = '';
  redis.on('error', (err: Error) => {
    lastError = err.message;
    report();
  });
  return redis;
}
