import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AWKWARD_PASSWORD,
  ownClusterUnavailable,
  startOwnCluster,
  urlWithPassword,
  type OwnCluster,
} from './support/own-cluster.js';
import { PGBOUNCER_PATH, startPgBouncer, type PgBouncer } from './support/pgbouncer.js';
import {
  call,
  createMerchantOn,
  startService,
  stopService,
  waitFor,
  withDatabase,
  type ServiceProcess,
} from './support/service.js';

/**
 * The service on a PostgreSQL that asks for a password (scram-sha-256), and through PgBouncer that
 * asks for one too (the README's recipe), with a password made of every character a URL has to
 * percent-encode: every connection the service opens must carry it (migrations, the pool, the
 * rate-limit store and the job queue on that pool, the LISTEN connection, a replica's pool).
 * Builds its own cluster (the machine's shared one trusts everyone): a laptop without the server
 * binaries or root skips it; under CI=true a missing tool fails the run.
 */
const unavailable = ownClusterUnavailable() ?? (PGBOUNCER_PATH ? undefined : 'pgbouncer is not installed');
const describePassword = unavailable && !process.env.CI ? describe.skip : describe;

describePassword('a database that asks for a password', () => {
  let cluster: OwnCluster | undefined;
  let bouncer: PgBouncer | undefined;
  const services: ServiceProcess[] = [];

  beforeAll(async () => {
    if (unavailable) throw new Error(`database-password test: ${unavailable}`);
    cluster = await startOwnCluster({ password: AWKWARD_PASSWORD });
    // The cluster really refuses a wrong password, so the service's success below proves it sent the right one.
    await expect(withDatabase(urlWithPassword(cluster.port, 'wrong'), (c) => c.query('select 1'))).rejects.toThrow(
      /password authentication failed/,
    );
    bouncer = await startPgBouncer({ target: new URL(cluster.url), poolMode: 'transaction', poolSize: 4 });
    await expect(
      withDatabase(bouncer.urlFor(urlWithPassword(cluster.port, 'wrong')), (c) => c.query('select 1')),
    ).rejects.toThrow(/password authentication failed|SASL/);
  }, 60_000);
  afterAll(async () => {
    for (const service of services) await stopService(service);
    await bouncer?.stop();
    cluster?.stop();
  });

  /** Starts the service, then: ready, an organization, a conversion, the lists; the password never logged. */
  async function servesWith(env: Record<string, string>) {
    const service = await startService(env.DATABASE_URL, env);
    services.push(service);
    expect((await call(service.url, 'GET', '/ready')).status).toBe(200);
    const merchant = await createMerchantOn(service.url);
    const conversion = await call(service.url, 'POST', '/api/conversions', {
      key: merchant.key,
      body: { external_id: 'inv-1', amount: 100, ref: merchant.slug },
    });
    expect(conversion.status).toBe(201);
    for (const path of ['/api/conversions', '/api/commissions', '/api/programs', '/api/affiliates']) {
      expect((await call(service.url, 'GET', path, { key: merchant.key })).status, path).toBe(200);
    }
    // The rate-limit store counts in PostgreSQL (no REDIS_URL), on the pool.
    expect(service.logs.some((l) => l.store === 'postgres')).toBe(true);
    // The LISTEN connection (DATABASE_DIRECT_URL, else DATABASE_URL) authenticated too.
    await waitFor(
      () => service.logs.some((l) => /cache change listener: listening/.test(String(l.msg))),
      10_000,
      'the change listener to listen',
    );
    expect(service.logs.filter((l) => /cache change listener: disconnected/.test(String(l.msg)))).toEqual([]);
    // The replica's pool logged in too: its reads were not sent to the primary for want of it.
    expect(service.logs.filter((l) => /read replica unreachable/.test(String(l.msg)))).toEqual([]);
    const written = JSON.stringify(service.logs) + service.stderr.join('\n');
    expect(written).not.toContain(AWKWARD_PASSWORD);
    expect(written).not.toContain(encodeURIComponent(AWKWARD_PASSWORD));
    return { service, merchant };
  }

  it(
    'starts and serves on PostgreSQL with scram-sha-256, its replica URL and direct URL carrying the password too',
    { timeout: 90_000 },
    async () => {
      // The primary stands in for a replica here: what is tested is that the replica's pool logs in.
      const { service, merchant } = await servesWith({
        DATABASE_URL: cluster!.url,
        DATABASE_DIRECT_URL: cluster!.url,
        DATABASE_REPLICA_URLS: cluster!.url,
      });
      const listed = await call(service.url, 'GET', '/api/conversions', { key: merchant.key });
      expect(listed.body.data.conversions.map((c: { external_id: string }) => c.external_id)).toEqual(['inv-1']);
      // The job queue (pg-boss, on the pool) installed its schema.
      await withDatabase(cluster!.url, async (client) => {
        const { rows } = await client.query(`select 1 from information_schema.schemata where schema_name = 'pgboss'`);
        expect(rows).toHaveLength(1);
      });
    },
  );

  it(
    'starts and serves through PgBouncer asking for the password (scram-sha-256, transaction mode), LISTEN going straight to PostgreSQL',
    { timeout: 90_000 },
    async () => {
      const pooled = bouncer!.urlFor(cluster!.url);
      expect(pooled).toContain(encodeURIComponent(AWKWARD_PASSWORD));
      await servesWith({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: cluster!.url, DATABASE_REPLICA_URLS: pooled });
    },
  );
});
