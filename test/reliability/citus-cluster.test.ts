import { beforeAll, describe, expect, it } from 'vitest';
import { DISTRIBUTED_TABLES } from '../../server/src/db/distribution.js';
import { createMerchant, type Api } from '../support/api.js';
import { citusNodesOf, withClient } from '../support/citus.js';
import { testServer } from '../support/server.js';
import { citusUnavailable } from './support/citus-cluster.js';
import { multiShard, plansOf, recordStatements } from './support/citus-plans.js';
import { foreignKeysOf, realDistributionProblems } from './support/citus-distribution.js';
import { closeOrm, initOrm } from '../../server/src/db/orm.js';

/**
 * The service on a real Citus cluster (DATABASE_URL at a coordinator with two workers: what
 * test/reliability/citus-suites.ts builds and runs this file on): the schema distributed as
 * db/distribution.ts says, an organization's rows on one worker, every request's statements
 * single-shard (router) plans, and a shard moved to the other worker under steady clicks and
 * conversions losing and doubling nothing. On plain PostgreSQL it has nothing to test: it says so
 * and is skipped, except under CI=true when Citus is not installed at all (CI must run it, through
 * citus-suites.ts).
 */
const serverUrl = process.env.DATABASE_URL;
const nodes = serverUrl ? await citusNodesOf(serverUrl).catch(() => undefined) : undefined;
const missing = citusUnavailable();
if (!nodes && missing && process.env.CI)
  throw new Error(`CI must run the Citus tests (test/reliability/citus-suites.ts): ${missing}`);
if (!nodes)
  console.info(
    `citus-cluster.test.ts skipped: DATABASE_URL is not a Citus coordinator (${missing ?? 'run it with npx tsx test/reliability/citus-suites.ts'})`,
  );

/** The worker ports that hold the organization's shard of each tenant table. */
async function placementsOf(url: string, organizationId: string): Promise<Map<string, number[]>> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ table: string; port: number }>(
      `select t.name as "table", s.nodeport as port
       from unnest($1::text[]) t(name)
       join pg_dist_shard_placement s on s.shardid = get_shard_id_for_distribution_column(t.name, $2::uuid)`,
      [DISTRIBUTED_TABLES, organizationId],
    );
    const byTable = new Map<string, number[]>();
    for (const { table, port } of rows) byTable.set(table, [...(byTable.get(table) ?? []), port]);
    return byTable;
  });
}

describe.runIf(nodes)('on a Citus cluster (a coordinator and two workers)', () => {
  let url: string;
  beforeAll(async () => {
    url = (await testServer()).db.url;
  });

  it('the migrations distributed every table as db/distribution.ts says', async () => {
    expect(await withClient(url, (c) => realDistributionProblems(c))).toEqual([]);
  });

  it('every foreign key of plain PostgreSQL is there, the same, after the migrations distributed the schema', async () => {
    // The same migrations on a database of the coordinator without the citus extension: plain PostgreSQL.
    const name = `aa_plain_${process.pid}_${Date.now()}`;
    const plainUrl = new URL(serverUrl!);
    plainUrl.pathname = `/${name}`;
    await withClient(serverUrl!, (c) => c.query(`create database "${name}"`));
    try {
      await closeOrm(await initOrm(plainUrl.toString(), 1), true);
      const plain = await withClient(plainUrl.toString(), (c) => foreignKeysOf(c));
      expect(plain.length).toBeGreaterThan(40);
      expect(await withClient(url, (c) => foreignKeysOf(c))).toEqual(plain);
    } finally {
      await withClient(serverUrl!, (c) => c.query(`drop database if exists "${name}" with (force)`));
    }
  });

  it("an organization's rows live on one worker: every tenant table's shard for it is placed on the same node", async () => {
    const m = await createMerchant();
    expect((await m.api.post('/api/clicks', { ref: m.slug })).status).toBe(201);
    expect((await m.api.post('/api/conversions', { external_id: 'one-worker', amount: 10, ref: m.slug })).status).toBe(
      201,
    );
    const placements = await placementsOf(url, m.id);
    expect([...placements.keys()].sort()).toEqual([...DISTRIBUTED_TABLES].sort());
    const ports = new Set([...placements.values()].flat());
    expect(ports.size, JSON.stringify(Object.fromEntries(placements))).toBe(1);
    expect(nodes!.workers.map((w) => w.port)).toContain([...ports][0]);
  });

  /** Runs each request, records its statements and answers those Citus would run on more than one shard. */
  async function multiShardStatements(checks: [string, () => Promise<unknown>][]): Promise<string[]> {
    const problems: string[] = [];
    for (const [name, action] of checks) {
      let status = 0;
      const statements = await recordStatements(async () => {
        status = ((await action()) as { status: number }).status;
      });
      expect(status, name).toBeLessThan(300);
      expect(statements.length, `${name} sent statements`).toBeGreaterThan(0);
      for (const found of multiShard(await plansOf(url, statements))) problems.push(`${name}: ${found}`);
    }
    return problems;
  }

  it('every statement of the hot and common requests is a single-shard (router) plan: Task Count 1', async () => {
    const m = await createMerchant();
    const api: Api = m.api;
    const checks: [string, () => Promise<unknown>][] = [
      ['POST /api/clicks', () => api.post('/api/clicks', { ref: m.slug })],
      ['POST /api/customers', () => api.post('/api/customers', { customer_id: 'cus_router', ref: m.slug })],
      [
        'POST /api/conversions (by click)',
        () => api.post('/api/conversions', { external_id: 'router-1', amount: 40, ref: m.slug }),
      ],
      [
        'POST /api/conversions (by customer)',
        () => api.post('/api/conversions', { external_id: 'router-2', amount: 40, customer_id: 'cus_router' }),
      ],
      ['GET /api/me', () => api.get('/api/me')],
      ['GET /api/affiliates', () => api.get('/api/affiliates')],
      ['GET /api/conversions', () => api.get('/api/conversions')],
      ['GET /api/commissions', () => api.get('/api/commissions')],
      ['GET /api/payouts', () => api.get('/api/payouts')],
      ['GET /api/affiliates/{id}', () => api.get(`/api/affiliates/${m.affiliate.id}`)],
      ['GET /api/conversions/{external_id}', () => api.get('/api/conversions/router-1')],
      ['GET /api/programs/{id}', () => api.get(`/api/programs/${m.program.id}`)],
    ];
    expect(await multiShardStatements(checks)).toEqual([]);
  });

  it('the reports are single-shard (router) plans: Task Count 1', async () => {
    const m = await createMerchant();
    expect((await m.api.post('/api/conversions', { external_id: 'report-1', amount: 40, ref: m.slug })).status).toBe(
      201,
    );
    const now = new Date().toISOString();
    const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const checks: [string, () => Promise<unknown>][] = [
      ['GET /api/reports/affiliates', () => m.api.get(`/api/reports/affiliates?from=${monthAgo}&to=${now}`)],
      [
        'GET /api/reports/timeseries',
        () => m.api.get(`/api/reports/timeseries?from=${monthAgo}&to=${now}&interval=day`),
      ],
    ];
    expect(await multiShardStatements(checks)).toEqual([]);
  });

  it(
    'a shard moved to the other worker under steady clicks and conversions loses and doubles nothing',
    { timeout: 120_000 },
    async () => {
      const m = await createMerchant();
      const before = await placementsOf(url, m.id);
      const from = before.get('clicks')![0];
      const to = nodes!.workers.find((w) => w.port !== from)!;
      const acknowledged = { clicks: new Set<string>(), conversions: new Set<string>() };
      const failures: number[] = [];
      let moving = true;
      let n = 0;
      const load = async () => {
        while (moving) {
          const i = ++n;
          const click = await m.api.post('/api/clicks', { ref: m.slug });
          if (click.status === 201) acknowledged.clicks.add(click.body.data.click.id as string);
          else failures.push(click.status);
          const sale = await m.api.post('/api/conversions', { external_id: `move-${i}`, amount: 10, ref: m.slug });
          if (sale.status === 201) acknowledged.conversions.add(`move-${i}`);
          else failures.push(sale.status);
        }
      };
      const loads = Array.from({ length: 3 }, load);
      await new Promise((r) => setTimeout(r, 500));
      await withClient(url, (c) =>
        c.query(
          `select citus_move_shard_placement(get_shard_id_for_distribution_column('clicks', $1::uuid), '127.0.0.1', $2, '127.0.0.1', $3)`,
          [m.id, from, to.port],
        ),
      );
      await new Promise((r) => setTimeout(r, 500));
      moving = false;
      await Promise.all(loads);
      const after = await placementsOf(url, m.id);
      expect(new Set([...after.values()].flat())).toEqual(new Set([to.port]));
      expect(failures).toEqual([]);
      expect(acknowledged.clicks.size).toBeGreaterThan(0);
      const stored = await withClient(url, async (c) => ({
        clicks: (
          await c.query<{ id: string; n: number }>(
            'select id, count(*)::int as n from clicks where organization_id = $1 and id = any($2::uuid[]) group by 1',
            [m.id, [...acknowledged.clicks]],
          )
        ).rows,
        conversions: (
          await c.query<{ external_id: string; n: number }>(
            'select external_id, count(*)::int as n from conversions where organization_id = $1 group by 1',
            [m.id],
          )
        ).rows,
      }));
      // Every acknowledged click and conversion stored, once.
      expect(stored.clicks.filter((r) => r.n !== 1)).toEqual([]);
      expect(new Set(stored.clicks.map((r) => r.id))).toEqual(acknowledged.clicks);
      expect(stored.conversions.filter((r) => r.n !== 1)).toEqual([]);
      expect(new Set(stored.conversions.map((r) => r.external_id))).toEqual(acknowledged.conversions);
    },
  );
});
