import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { contractRoutes, fillPath } from './support/contract-routes.js';
import {
  describeWithPgBouncer,
  freePort,
  PGBOUNCER_PATH,
  startPgBouncer,
  type PgBouncer,
} from './support/pgbouncer.js';
import {
  call,
  createMerchantOn,
  isEnvelope,
  startService,
  stopService,
  waitFor,
  withDatabase,
  type JsonResponse,
  type ServiceProcess,
} from './support/service.js';

/** PgBouncer's server connections for the test database: fewer than the two instances' pools, so every server connection serves many clients. */
const SERVER_CONNECTIONS = 4;
/** pg-pool drops a client idle this long (its default, which the service keeps). */
const SERVICE_POOL_IDLE_MS = 10_000;
/** PgBouncer closes server connections idle this long (short here: its default is 600 s). */
const SERVER_IDLE_TIMEOUT_S = 2;
const LONG_TTL_MS = 60_000;

type Merchant = Awaited<ReturnType<typeof createMerchantOn>>;

/** Answers grouped by status, with every 5xx's body kept for the failure message. */
class Tally {
  readonly statuses: Record<string, number> = {};
  readonly serverErrors: string[] = [];
  readonly malformed: unknown[] = [];

  add(what: string, res: JsonResponse): JsonResponse {
    this.statuses[res.status] = (this.statuses[res.status] ?? 0) + 1;
    if (res.status >= 500) this.serverErrors.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    if (res.status >= 400 && res.headers.get('content-type')?.includes('json') && !isEnvelope(res.body))
      this.malformed.push(res.body);
    return res;
  }

  get total(): number {
    return Object.values(this.statuses).reduce((a, b) => a + b, 0);
  }
}

/**
 * Two service processes on one PostgreSQL through Debian's PgBouncer in transaction mode
 * (PgBouncer's defaults otherwise, so it refuses the statement_timeout start-up parameter), with
 * fewer server connections than clients: any transaction of any client may land on any server
 * connection. Their LISTEN goes straight to PostgreSQL (DATABASE_DIRECT_URL). The core routes, the
 * idempotency races and a click and conversion load answer no 5xx; a change on one instance
 * reaches the other at once, or within the TTL when the direct connection is unreachable; then
 * both processes are replaced by new ones on the same PgBouncer (its server connections keep
 * whatever the old ones left on them) and everything idles past the service pool's and
 * PgBouncer's idle timeouts: still no 5xx. A third process without DATABASE_DIRECT_URL reports
 * its pooled listener; an unexpected database error is logged with its code and heals.
 */
describeWithPgBouncer('behind PgBouncer in transaction mode', () => {
  let db: TestDatabase;
  let bouncer: PgBouncer;
  let instances: ServiceProcess[] = [];
  /** Instances started with other settings, outside the tally. */
  const others: ServiceProcess[] = [];
  let env: Record<string, string>;
  let merchant: Merchant;
  const tally = new Tally();

  beforeAll(async () => {
    db = await createTestDatabase();
    bouncer = await startPgBouncer({
      target: new URL(process.env.DATABASE_URL!),
      poolMode: 'transaction',
      poolSize: SERVER_CONNECTIONS,
      settings: { server_idle_timeout: SERVER_IDLE_TIMEOUT_S },
    });
    // The pooled connections go through PgBouncer; LISTEN goes straight to PostgreSQL.
    env = {
      DATABASE_URL: bouncer.urlFor(db.url),
      DATABASE_DIRECT_URL: db.url,
      DB_POOL_MAX: '10',
      SHUTDOWN_DRAIN_DELAY_MS: '0',
      // Only a change notification can make a change apply sooner than this.
      PROGRAM_RULE_CACHE_TTL_MS: String(LONG_TTL_MS),
      API_KEY_CACHE_TTL_MS: String(LONG_TTL_MS),
    };
    instances = await Promise.all([startService(env.DATABASE_URL, env), startService(env.DATABASE_URL, env)]);
    merchant = await createMerchantOn(instances[0].url);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...instances, ...others].map(stopService));
    await bouncer?.stop();
    await db?.stop();
  });

  it.runIf(process.env.CI)('CI has pgbouncer (.ci/run installs it), so this suite never skips there', () => {
    expect(PGBOUNCER_PATH, 'apt-get install -y pgbouncer').toBeDefined();
  });

  /** Each instance in turn. */
  let turn = 0;
  const next = () => instances[turn++ % instances.length];
  const send = async (method: string, path: string, body?: unknown, expected?: number): Promise<JsonResponse> => {
    const res = tally.add(`${method} ${path}`, await call(next().url, method, path, { key: merchant.key, body }));
    if (expected !== undefined) expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(expected);
    return res;
  };

  /** The core routes, each with its expected status: every module's statements, hot and batched ones included. */
  async function coreChecks(tag: string): Promise<void> {
    const me = await send('GET', '/api/me', undefined, 200);
    expect(me.body.data.organization.id).toBe(merchant.organizationId);
    const program = await send(
      'POST',
      '/api/programs',
      { name: `P ${tag}`, commission_type: 'flat', commission_value: 5 },
      201,
    );
    const programId: string = program.body.data.program.id;
    await send('PATCH', `/api/programs/${programId}`, { commission_value: 7 }, 200);
    const affiliate = await send(
      'POST',
      '/api/affiliates',
      { email: `a-${tag}@example.com`, program_id: programId, slug: `s-${tag}` },
      201,
    );
    const affiliateId: string = affiliate.body.data.affiliate.id;
    await send('POST', '/api/affiliates', { email: `a-${tag}@example.com`, program_id: programId }, 200);
    const click = await send('POST', '/api/clicks', { ref: `s-${tag}` }, 201);
    const cookieId: string = click.body.data.click.cookie_id;
    await send('POST', `/public/organizations/${merchant.organizationId}/clicks`, { ref: `s-${tag}` });
    await send('POST', '/api/customers', { customer_id: `c-${tag}`, cookie_id: cookieId }, 201);
    await send('POST', '/api/customers', { customer_id: `c-${tag}`, cookie_id: cookieId }, 200);
    await send('PATCH', `/api/customers/c-${tag}`, { status: 'active' }, 200);
    await send('GET', `/api/customers/c-${tag}`, undefined, 200);
    const first = await send(
      'POST',
      '/api/conversions',
      { external_id: `i1-${tag}`, amount: 100, customer_id: `c-${tag}` },
      201,
    );
    expect(first.body.data.conversion.commission_amount).toBe(7);
    await send('POST', '/api/conversions', { external_id: `i1-${tag}`, amount: 100, customer_id: `c-${tag}` }, 200);
    const renewal = await send(
      'POST',
      '/api/conversions',
      { external_id: `i2-${tag}`, amount: 100, customer_id: `c-${tag}` },
      201,
    );
    expect(renewal.body.data.conversion.kind).toBe('recurring');
    await send(
      'POST',
      '/api/conversions',
      { external_id: `i3-${tag}`, amount: 50, ref: `s-${tag}`, customer_id: `c2-${tag}` },
      201,
    );
    await send('POST', `/api/conversions/i2-${tag}/refund`, { amount: 40, refund_id: `r-${tag}` }, 200);
    await send('POST', `/api/conversions/i2-${tag}/refund`, { amount: 40, refund_id: `r-${tag}` }, 200);
    await send('GET', `/api/conversions/i1-${tag}`, undefined, 200);
    await send('GET', `/api/conversions?affiliate_id=${affiliateId}`, undefined, 200);
    await send('GET', `/api/affiliates/${affiliateId}`, undefined, 200);
    await send('POST', '/api/commissions', { affiliate_id: affiliateId, amount: 3, description: `bonus ${tag}` }, 201);
    // Every GET of the contract, with this merchant's ids where it names one: none answers 5xx.
    const ids: Record<string, string> = {
      id: affiliateId,
      organizationId: merchant.organizationId,
      provider: 'stripe',
      keyId: affiliateId,
    };
    for (const { route } of contractRoutes().filter((r) => r.route.method === 'GET')) {
      const path = fillPath(route.path, route.path.startsWith('/api/programs') ? { ...ids, id: programId } : ids);
      const res = tally.add(
        `GET ${path}`,
        await call(next().url, 'GET', path, { key: merchant.key, admin: path.startsWith('/admin') }),
      );
      expect(res.status, `GET ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
    }
  }

  /** 8 copies of the same idempotent request to each instance, all in flight together: one record. */
  async function races(tag: string): Promise<void> {
    const race = async (path: string, body: unknown, resource: string) => {
      const sends: Promise<JsonResponse>[] = [];
      for (let i = 0; i < 8; i++)
        for (const instance of instances) sends.push(call(instance.url, 'POST', path, { key: merchant.key, body }));
      const answers = (await Promise.all(sends)).map((res) => tally.add(`race ${path}`, res));
      const statuses = answers.map((r) => r.status);
      expect(
        statuses.filter((s) => s === 201),
        JSON.stringify(statuses),
      ).toHaveLength(1);
      expect(statuses.filter((s) => s === 200)).toHaveLength(answers.length - 1);
      expect(new Set(answers.map((r) => r.body.data[resource].id)).size).toBe(1);
    };
    await race('/api/affiliates', { email: `race-${tag}@example.com`, program_id: merchant.programId }, 'affiliate');
    await race('/api/customers', { customer_id: `race-${tag}`, ref: merchant.slug }, 'customer');
    await race(
      '/api/conversions',
      { external_id: `race-${tag}`, amount: 20, customer_id: `race-${tag}` },
      'conversion',
    );
    await race(
      '/api/conversions',
      { external_id: `race-new-${tag}`, amount: 20, ref: merchant.slug, customer_id: `race-new-${tag}` },
      'conversion',
    );
  }

  /** `concurrency` clients sending clicks and conversions (every other one with a new customer) for `ms`. */
  async function load(tag: string, ms: number, concurrency = 16): Promise<number> {
    const until = Date.now() + ms;
    let n = 0;
    const worker = async () => {
      while (Date.now() < until) {
        const i = n++;
        const res =
          i % 2 === 0
            ? await call(next().url, 'POST', '/api/clicks', { key: merchant.key, body: { ref: merchant.slug } })
            : await call(next().url, 'POST', '/api/conversions', {
                key: merchant.key,
                body: {
                  external_id: `load-${tag}-${i}`,
                  amount: 10,
                  ref: merchant.slug,
                  ...(i % 4 === 1 ? { customer_id: `load-${tag}-${i}` } : {}),
                },
              });
        tally.add(`load ${i % 2 === 0 ? 'click' : 'conversion'}`, res);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return n;
  }

  function expectNoServerErrors(): void {
    expect(tally.serverErrors.slice(0, 5), `${tally.serverErrors.length} x 5xx`).toEqual([]);
    expect(tally.malformed).toEqual([]);
    for (const instance of instances) {
      const errors = instance.logs.filter((l) => typeof l.level === 'number' && l.level >= 50);
      expect(errors.slice(0, 3), 'error log lines').toEqual([]);
    }
  }

  /** The commission an instance computes for a new 100.00 sale by the merchant's affiliate. */
  async function commissionOn(instance: ServiceProcess): Promise<number> {
    const res = await call(instance.url, 'POST', '/api/conversions', {
      key: merchant.key,
      body: { external_id: `rule-${Date.now()}-${Math.random()}`, amount: 100, ref: merchant.slug },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.conversion.commission_amount as number;
  }

  async function setCommission(instance: ServiceProcess, value: number): Promise<void> {
    const res = await call(instance.url, 'PATCH', `/api/programs/${merchant.programId}`, {
      key: merchant.key,
      body: { commission_value: value },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }

  it('core routes, idempotency races and a click/conversion load: no 5xx', { timeout: 90_000 }, async () => {
    await coreChecks('fresh');
    await races('fresh');
    const sent = await load('fresh', 4_000);
    expectNoServerErrors();
    // PgBouncer (by default) refuses the statement_timeout start-up parameter: each instance said
    // so once and connected without it.
    for (const instance of instances) {
      expect(
        instance.logs.filter((l) => /refuses the statement_timeout start-up parameter/.test(String(l.msg))),
      ).toHaveLength(1);
    }
    console.info(
      `[pgbouncer] fresh: ${tally.total} requests (${sent} in the load) through ${SERVER_CONNECTIONS} server connections: ${JSON.stringify(tally.statuses)}`,
    );
  });

  it(
    'a program changed on one instance applies on the other at once: LISTEN on DATABASE_DIRECT_URL',
    { timeout: 30_000 },
    async () => {
      const [a, b] = instances;
      // B has cached the program's rule during the load; the notification is delivered after A's
      // commit, asynchronously, so B applies a change milliseconds after A has answered.
      await setCommission(a, 30);
      await waitFor(async () => (await commissionOn(b)) === 30, 2_000, 'B to pay 30');
      expect(await commissionOn(b)).toBe(30);
      await setCommission(a, 10);
      const from = Date.now();
      await waitFor(async () => (await commissionOn(b)) === 10, 2_000, 'B to pay the new commission');
      console.info(
        `[pgbouncer] a program change applied on the other instance after ${Date.now() - from} ms (TTL ${LONG_TTL_MS} ms)`,
      );
    },
  );

  it(
    'DATABASE_DIRECT_URL unreachable: the instance serves, and a change applies within its TTL',
    { timeout: 30_000 },
    async () => {
      const ttlMs = 1_000;
      const deaf = await startService(env.DATABASE_URL, {
        ...env,
        DATABASE_DIRECT_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`,
        PROGRAM_RULE_CACHE_TTL_MS: String(ttlMs),
      });
      others.push(deaf);
      await setCommission(instances[0], 20);
      expect(await commissionOn(deaf)).toBe(20);
      await setCommission(instances[0], 15);
      const from = Date.now();
      await waitFor(
        async () => (await commissionOn(deaf)) === 15,
        ttlMs + 1_500,
        'the instance without a listener to pay the new commission',
      );
      const ms = Date.now() - from;
      expect(deaf.logs.some((l) => /cache change listener: disconnected/.test(String(l.msg)))).toBe(true);
      expect(deaf.logs.filter((l) => typeof l.level === 'number' && l.level >= 50)).toEqual([]);
      console.info(`[pgbouncer] listener down: a program change applied after ${ms} ms (TTL ${ttlMs} ms)`);
      await setCommission(instances[0], 7);
    },
  );

  it(
    'after both instances restarted on the same PgBouncer and idled past both idle timeouts: no 5xx',
    { timeout: 120_000 },
    async () => {
      const before = tally.total;
      await Promise.all(
        instances.map(async (instance) => {
          instance.child.kill('SIGTERM');
          expect((await instance.exited).code).toBe(0);
        }),
      );
      instances = await Promise.all([startService(env.DATABASE_URL, env), startService(env.DATABASE_URL, env)]);
      // One more, misconfigured: no DATABASE_DIRECT_URL, so it LISTENs through PgBouncer.
      const { DATABASE_DIRECT_URL: _direct, ...pooledListener } = env;
      const misconfigured = await startService(env.DATABASE_URL, pooledListener);
      others.push(misconfigured);
      await coreChecks('restarted');
      await load('restarted', 2_000);
      // Past pg-pool's idle timeout (the service's connections to PgBouncer close) and PgBouncer's
      // server_idle_timeout (its connections to PostgreSQL close).
      await new Promise((resolve) => setTimeout(resolve, SERVICE_POOL_IDLE_MS + 2_000));
      await coreChecks('idle');
      await races('idle');
      const sent = await load('idle', 3_000);
      expectNoServerErrors();
      console.info(
        `[pgbouncer] restarted and idle: ${tally.total - before} more requests (${sent} in the last load): ${JSON.stringify(tally.statuses)}`,
      );
      // Every record the races made exists once.
      const dupes = await withDatabase(db.url, (client) =>
        client.query(
          "select external_id from conversions where external_id like 'race-%' group by organization_id, external_id having count(*) > 1",
        ),
      );
      expect(dupes.rows).toEqual([]);
      // The misconfigured instance noticed (its heartbeat met another server process than its
      // LISTEN, once PgBouncer had closed that one as idle) and said what to set.
      await waitFor(
        () => misconfigured.logs.some((l) => /set DATABASE_DIRECT_URL/.test(String(l.msg))),
        15_000,
        'the pooled listener to be reported',
      );
    },
  );

  it(
    'an unexpected database error is logged with its code, and the route serves again once its cause is gone, without a restart',
    { timeout: 30_000 },
    async () => {
      const [a] = instances;
      const click = () => call(a.url, 'POST', '/api/clicks', { key: merchant.key, body: { ref: merchant.slug } });
      expect((await click()).status).toBe(201);
      // An operator's mistake the service cannot foresee: the table is renamed under it.
      await withDatabase(db.url, (client) => client.query('alter table clicks rename to clicks_elsewhere'));
      let broken: JsonResponse[];
      try {
        broken = await Promise.all([click(), click(), click()]);
        expect((await call(a.url, 'GET', '/api/me', { key: merchant.key })).status).toBe(200);
      } finally {
        await withDatabase(db.url, (client) => client.query('alter table clicks_elsewhere rename to clicks'));
      }
      expect(broken.map((r) => r.status)).toEqual([500, 500, 500]);
      expect(broken.every((r) => isEnvelope(r.body))).toBe(true);
      const logged = a.logs.filter((l) => l.level === 50);
      console.info(`[pgbouncer] unexpected error logged as: ${JSON.stringify(logged[0]).slice(0, 600)}`);
      expect(
        logged.some((l) => (l.err as { code?: unknown } | undefined)?.code === '42P01' || l.code === '42P01'),
      ).toBe(true);
      const again = await Promise.all([click(), click(), click()]);
      expect(again.map((r) => r.status)).toEqual([201, 201, 201]);
    },
  );
});

describe('DATABASE_DIRECT_URL (and its former name DATABASE_LISTEN_URL)', () => {
  const pooled = 'postgres://app@pgbouncer:6432/app';
  const direct = 'postgres://app@db:5432/app';

  it('defaults to DATABASE_URL, and is unset on the embedded database', () => {
    expect(loadConfig({ DATABASE_URL: pooled }).DATABASE_DIRECT_URL).toBe(pooled);
    expect(loadConfig({}).DATABASE_DIRECT_URL).toBeUndefined();
  });

  it('is read under either name; both set to different URLs is refused', () => {
    expect(loadConfig({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: direct }).DATABASE_DIRECT_URL).toBe(direct);
    expect(loadConfig({ DATABASE_URL: pooled, DATABASE_LISTEN_URL: direct }).DATABASE_DIRECT_URL).toBe(direct);
    expect(
      loadConfig({ DATABASE_URL: pooled, DATABASE_LISTEN_URL: direct, DATABASE_DIRECT_URL: direct })
        .DATABASE_DIRECT_URL,
    ).toBe(direct);
    expect(() =>
      loadConfig({ DATABASE_URL: pooled, DATABASE_LISTEN_URL: direct, DATABASE_DIRECT_URL: pooled }),
    ).toThrow(/DATABASE_LISTEN_URL: is the former name of DATABASE_DIRECT_URL/);
    expect(() => loadConfig({ DATABASE_DIRECT_URL: direct })).toThrow(/DATABASE_DIRECT_URL: requires DATABASE_URL/);
  });

  it('the drain delay defaults to 5 s', () => {
    expect(loadConfig({}).SHUTDOWN_DRAIN_DELAY_MS).toBe(5_000);
  });
});
