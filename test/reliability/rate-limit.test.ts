import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type Server, createServer } from 'node:http';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { initOrm } from '../../server/src/db/orm.js';
import { memoryRateLimiter } from '../../server/src/http/rate-limit-flexible.js';
import {
  RATE_LIMIT_TABLE,
  createRateLimiterFactory,
  type RateLimiterFactory,
} from '../../server/src/http/rate-limit-stores.js';
import { hashApiKey } from '../../server/src/modules/organizations/api-key.js';
import { createMerchant, createOrganization } from '../support/api.js';
import { TEST_ADMIN_TOKEN, TEST_PUBLIC_BASE_URL, testServer } from '../support/server.js';
import { call } from './support/service.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const silent = pino({ level: 'silent' });

async function redisReachable(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** Redis is part of the test environment (CI runs on a machine with one); locally it may be absent. */
const hasRedis = await redisReachable();
if (!hasRedis && process.env.CI)
  throw new Error(`CI must provide Redis for the shared rate-limit tests: nothing answers at ${REDIS_URL}`);
const describeWithRedis = hasRedis ? describe : describe.skip;

async function appWith(
  deps: Partial<Parameters<typeof createApp>[0]>,
  config: Record<string, unknown> = {},
): Promise<{ url: string; server: Server }> {
  const { db } = await testServer();
  const { listener } = createApp({
    orm: db.orm,
    logger: silent,
    config: {
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL,
      API_KEY_CACHE_TTL_MS: 5_000,
      ...config,
    },
    ...deps,
  });
  const server = createServer(listener).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function close(server: Server | undefined): Promise<unknown> {
  server?.closeAllConnections();
  return new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
}

/** A logger that keeps what it writes, to check the outage warning. */
function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, lines };
}

/** N requests with one key, alternately to each instance; their statuses in order. */
async function spread(urls: string[], key: string, n: number, path = '/api/me'): Promise<number[]> {
  const statuses = [];
  for (let i = 0; i < n; i++) statuses.push((await call(urls[i % urls.length], 'GET', path, { key })).status);
  return statuses;
}

describe('rate limiting per API key', () => {
  let url: string;
  let server: Server;

  beforeAll(async () => {
    ({ url, server } = await appWith({ apiKeyRateLimiter: memoryRateLimiter({ limit: 3, windowSeconds: 60 }) }));
  });
  afterAll(() => close(server));

  it('answers 429 in the envelope with Retry-After past the limit; other keys keep their budget', async () => {
    const a = await createOrganization();
    const b = await createOrganization();
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await call(url, 'GET', '/api/me', { key: a.key }));
    expect(statuses.slice(0, 3).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(statuses[0].headers.get('ratelimit-limit')).toBe('3');
    expect(statuses[2].headers.get('ratelimit-remaining')).toBe('0');
    const refused = statuses[3];
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ success: false, message: 'Too many requests; retry later' });
    // The window started with the key's first request: what is left of it, in whole seconds.
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // Another key of another organization is not affected.
    expect((await call(url, 'GET', '/api/me', { key: b.key })).status).toBe(200);
    // Invalid keys are refused by authentication first and do not consume any key's budget.
    expect((await call(url, 'GET', '/api/me', { key: 'svc-not-a-real-key' })).status).toBe(401);
  });
});

describe('rate limits shared through PostgreSQL (no Redis)', () => {
  const config = {
    DATABASE_URL: 'postgres://set-so-that-the-factory-counts-in-postgresql',
    API_RATE_LIMIT_MAX: 6,
    API_RATE_LIMIT_WINDOW_SECONDS: 60,
    PUBLIC_RATE_LIMIT_MAX: 3,
    TRUST_PROXY: 'loopback',
  };
  let factories: RateLimiterFactory[];
  let instances: { url: string; server: Server }[];

  beforeAll(async () => {
    const { db } = await testServer();
    // Two instances wired as main.ts wires them, on one database: each its own factory and app.
    factories = [createRateLimiterFactory(config, silent, db.orm), createRateLimiterFactory(config, silent, db.orm)];
    expect(factories.map((f) => f.store)).toEqual(['postgres', 'postgres']);
    instances = await Promise.all(factories.map((f) => appWith({ rateLimiters: f }, config)));
  });
  afterAll(async () => {
    await Promise.all(instances.map((i) => close(i.server)));
  });

  it('two app instances share one per-key budget: the (limit+1)-th request is refused by either', async () => {
    const org = await createOrganization();
    const urls = instances.map((i) => i.url);
    expect(await spread(urls, org.key, 9)).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429]);
    const refused = await call(urls[1], 'GET', '/api/me', { key: org.key });
    expect(refused.body).toEqual({ success: false, message: 'Too many requests; retry later' });
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // Another organization's key has its own budget; an invalid key consumes none.
    expect((await call(urls[0], 'GET', '/api/me', { key: 'svc-not-a-real-key' })).status).toBe(401);
    expect(await spread(urls, (await createOrganization()).key, 2)).toEqual([200, 200]);
  });

  it('the public per-address limit is shared too', async () => {
    const m = await createMerchant();
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${instances[i % 2].url}/public/organizations/${m.id}/clicks`, {
        method: 'POST',
        body: JSON.stringify({ ref: m.slug }),
        headers: {
          'content-type': 'text/plain',
          'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0',
          'x-forwarded-for': '198.51.100.77',
        },
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
  });

  it('the counts live in the migration-made table, one row per key, in leases rather than per request', async () => {
    const { db } = await testServer();
    const big = { ...config, API_RATE_LIMIT_MAX: 10_000 };
    const factory = createRateLimiterFactory(big, silent, db.orm);
    const { url, server } = await appWith({ rateLimiters: factory }, big);
    try {
      const org = await createOrganization();
      expect(await spread([url], org.key, 25)).toEqual(Array(25).fill(200));
      const rows = await db.orm.em
        .fork()
        .getConnection()
        .execute<{ points: number }[]>(`select points from ${RATE_LIMIT_TABLE} where key = ?`, [
          `svc:rl:api:api-key:${hashApiKey(org.key)}`,
        ]);
      // Leases of 10 (0.1 % of 10 000): three round trips to PostgreSQL for 25 requests.
      expect(rows).toEqual([{ points: 30 }]);
    } finally {
      await close(server);
    }
  });

  it('falls back to counting per instance when PostgreSQL fails, with a warning, and never refuses for it', async ({
    skip,
  }) => {
    const { db } = await testServer();
    // The embedded database serves one connection at a time (and counts in memory in production):
    // a second pool cannot open there. CI always runs this on a real PostgreSQL.
    if (db.embedded) skip();
    // A pool of its own, closed: every statement of the limiter fails as in an outage.
    const broken = await initOrm(db.url, 1);
    await broken.close(true);
    const { logger, lines } = recordingLogger();
    const small = { ...config, API_RATE_LIMIT_MAX: 2 };
    const factory = createRateLimiterFactory(small, logger, broken);
    const { url, server } = await appWith({ rateLimiters: factory }, small);
    try {
      const org = await createOrganization();
      const started = Date.now();
      expect(await spread([url], org.key, 3)).toEqual([200, 200, 429]);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(lines.filter((l) => /rate-limit store unavailable/.test(String(l.msg)))).toHaveLength(1);
    } finally {
      await close(server);
    }
  });
});

describeWithRedis('rate limits shared through Redis', () => {
  const prefix = `svc:test:${randomBytes(4).toString('hex')}`;
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('counts one budget per key across limiter instances, in Redis', async () => {
    const factories = [
      createRateLimiterFactory({ REDIS_URL }, silent),
      createRateLimiterFactory({ REDIS_URL }, silent),
    ];
    try {
      const [first, second] = factories.map((f) => f.create({ limit: 5, windowSeconds: 60, prefix }));
      // A connection that is not ready yet counts in memory (the insurance limiter): wait for both.
      // (A fresh key each try: the insurance limiter may have spent one.)
      for (const [i, limiter] of [first, second].entries()) {
        for (let n = 0; ; n++) {
          await limiter.hit(`ready-${i}-${n}`);
          if (await redis.exists(`${prefix}:ready-${i}-${n}`)) break;
        }
      }
      const decisions = [];
      for (let i = 0; i < 12; i++) decisions.push(await (i % 2 ? first : second).hit('client-1'));
      expect(decisions.map((d) => d.allowed)).toEqual([
        true,
        true,
        true,
        true,
        true,
        false,
        false,
        false,
        false,
        false,
        false,
        false,
      ]);
      for (const d of decisions.filter((d) => !d.allowed)) {
        expect(d.remaining).toBe(0);
        expect(d.retryAfterSeconds).toBeGreaterThanOrEqual(1);
        expect(d.retryAfterSeconds).toBeLessThanOrEqual(60);
      }
      expect(Number(await redis.get(`${prefix}:client-1`))).toBeGreaterThanOrEqual(5);
      expect((await first.hit('client-2')).allowed).toBe(true);
    } finally {
      await Promise.all(factories.map((f) => f.close()));
    }
  });

  it('lets a client through again once the window has passed', async () => {
    const factory = createRateLimiterFactory({ REDIS_URL }, silent);
    try {
      const limiter = factory.create({ limit: 2, windowSeconds: 1, prefix: `${prefix}:slide` });
      expect((await limiter.hit('k')).allowed).toBe(true);
      expect((await limiter.hit('k')).allowed).toBe(true);
      const refused = await limiter.hit('k');
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterSeconds).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect((await limiter.hit('k')).allowed).toBe(true);
    } finally {
      await factory.close();
    }
  });

  it('holds across two app instances on one Redis: 429 from either once the key is spent', async () => {
    const config = { REDIS_URL, API_RATE_LIMIT_MAX: 6, API_RATE_LIMIT_WINDOW_SECONDS: 60 };
    const factories: RateLimiterFactory[] = [
      createRateLimiterFactory(config, silent),
      createRateLimiterFactory(config, silent),
    ];
    // Wired as main.ts wires it: the factory from REDIS_URL, the limit from the configuration.
    const instances = await Promise.all(factories.map((f) => appWith({ rateLimiters: f }, config)));
    try {
      const org = await createOrganization();
      expect(
        await spread(
          instances.map((i) => i.url),
          org.key,
          10,
        ),
      ).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429, 429]);
    } finally {
      await Promise.all(instances.map((i) => close(i.server)));
      await Promise.all(factories.map((f) => f.close()));
    }
  });

  it('falls back to counting per instance, fast, when Redis is unreachable: tracking never stops for the limiter', async () => {
    const { logger, lines } = recordingLogger();
    const factory = createRateLimiterFactory({ REDIS_URL: 'redis://127.0.0.1:1' }, logger);
    const { url, server } = await appWith({
      apiKeyRateLimiter: factory.create({ prefix, limit: 2, windowSeconds: 60 }),
    });
    try {
      const merchant = await createMerchant();
      const started = Date.now();
      expect(await spread([url], merchant.key, 3)).toEqual([200, 200, 429]);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(lines.some((l) => /rate-limit store unavailable/.test(String(l.msg)))).toBe(true);
    } finally {
      await close(server);
      await factory.close();
    }
  });
});
