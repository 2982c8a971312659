import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ORGANIZATION_TABLES } from '../../server/src/modules/organizations/organization-data.js';
import {
  compiled,
  contributionsOfRows,
  deltasInsertSql,
} from '../../server/src/modules/reports/report-contributions.js';
import { foldIn } from '../../server/src/modules/reports/report-fold.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  call,
  createMerchantOn,
  describeWithPostgres,
  startService,
  stopService,
  waitFor,
  withDatabase,
  type ServiceProcess,
} from './support/service.js';

/*
 * Issue 45, item 4: deleting a large organization (DELETE /admin/organizations/{id}) and resetting
 * a large test twin (DELETE /api/test-data) are jobs that delete in bounded batches: the request
 * answers at once, the progress is visible, every other organization's commission approvals and
 * conversions go on meanwhile, and a kill -9 of the service mid-way loses nothing: the restarted
 * service finishes the deletion. The service runs as a child process (server/src/main.ts, as in
 * production, its report fold included) on a database of its own; the rows are generated with
 * generate_series straight into the tables, then folded into the report summaries, as a long-lived
 * organization's are.
 */

/** The rows of `table` an organization ($1) owns (organization-data.ts ownedRows, restated: the test reads the catalog's tables itself). */
const owned = (table: string) =>
  table === 'organizations'
    ? 'id = $1'
    : table === 'sessions' || table === 'accounts'
      ? 'user_id in (select id from users where organization_id = $1)'
      : 'organization_id = $1';

/** Rows of every table the organization owns (a test organization's too), by table; the receipts apart. */
async function rowsOf(client: pg.Client, organizationId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ORGANIZATION_TABLES) {
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from ${table} where ${owned(table)}`,
      [organizationId],
    );
    counts[table] = rows[0].n;
  }
  return counts;
}

/**
 * Generates, for the organization's program, `affiliates` more affiliates, `clicks` clicks over
 * them, and `sales` customers, each with a conversion (of a click) and a pending sale entry; all
 * created over the last two days, consistent by construction (their keys are not checked row by
 * row here: session_replication_role, on this connection only, for speed). Then what they count in
 * the reports is written as their writers write it (report-contributions.ts) and folded into the
 * summaries (report-fold.ts), as a long-lived organization's summaries are.
 */
async function generate(
  url: string,
  organizationId: string,
  programId: string,
  counts: { affiliates: number; clicks: number; sales: number },
): Promise<void> {
  await withDatabase(url, async (client) => {
    const p = [organizationId, programId];
    await client.query('set session_replication_role = replica');
    await client.query(
      `insert into affiliates (id, organization_id, program_id, email, slug)
       select gen_random_uuid(), $1::uuid, $2::uuid, 'gen' || g || '@example.com', 'gen-' || left(md5($1::uuid::text), 8) || '-' || g from generate_series(1, $3::int) g`,
      [...p, counts.affiliates],
    );
    // Click g: an id of the organization's prefix and g, affiliate g mod n, occurred and created on the hour, over two days.
    const clickId = (g: string) => `(left(replace($1::uuid::text, '-', ''), 12) || lpad(to_hex(${g}), 20, '0'))::uuid`;
    await client.query(
      `insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, occurred_at, created_at)
       select ${clickId('g')}, $1::uuid, a.ids[1 + g % cardinality(a.ids)], $2::uuid, 'gen-' || lpad(g::text, 8, '0'), t, t
       from (select array_agg(id order by id) as ids from affiliates where organization_id = $1::uuid) a, generate_series(1, $3::int) g,
         lateral (select date_trunc('hour', now()) - interval '2 days' + (g % 47) * interval '1 hour' as t) x`,
      [...p, counts.clicks],
    );
    await client.query(
      `insert into customers (id, organization_id, customer_id, status, affiliate_id, program_id, click_id, created_at, updated_at)
       select gen_random_uuid(), c.organization_id, 'gen-cus-' || g, 'active', c.affiliate_id, c.program_id, c.id, c.created_at, c.created_at
       from generate_series(1, $2::int) g join clicks c on c.id = ${clickId('g')} and c.organization_id = $1::uuid`,
      [organizationId, counts.sales],
    );
    await client.query(
      `insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, customer_id, affiliate_id, program_id, click_id, occurred_at, created_at)
       select gen_random_uuid(), c.organization_id, 'gen-ord-' || g, 50, 'USD', 'initial', 5, 'gen-cus-' || g, c.affiliate_id, c.program_id, c.id, c.created_at, c.created_at
       from generate_series(1, $2::int) g join clicks c on c.id = ${clickId('g')} and c.organization_id = $1::uuid`,
      [organizationId, counts.sales],
    );
    await client.query(
      `insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, customer_id, approves_at, created_at, updated_at)
       select gen_random_uuid(), v.organization_id, 'sale', 'pending', 5, 'USD', v.affiliate_id, v.program_id, v.id, v.customer_id, now() + interval '30 days', v.created_at, v.created_at
       from conversions v where v.organization_id = $1::uuid`,
      [organizationId],
    );
    await client.query('reset session_replication_role');
    await client.query('analyze clicks, customers, conversions, commissions, affiliates');
    const own = (table: string) => `(select * from ${table} where organization_id = $1::uuid)`;
    await client.query(deltasInsertSql(contributionsOfRows(own)), [organizationId]);
    await foldIn(async (query) => {
      const { sql, parameters } = compiled(query).compile();
      return (await client.query(sql, [...parameters])).rows;
    }, organizationId);
  });
}

/** The organization's rows but its report summaries (they move as the background fold folds its new rows). */
async function facts(url: string, organizationId: string): Promise<Record<string, number>> {
  // Not the reports' summaries, nor partner_notices: the partner notices' round (every 5 s) records
  // the e-mails of an organization's new commissions whenever it gets to them, deletion or not.
  return Object.fromEntries(
    Object.entries(await withDatabase(url, (c) => rowsOf(c, organizationId))).filter(
      ([t]) => !t.startsWith('report_') && t !== 'partner_notices',
    ),
  );
}

async function deletionOf(url: string, organizationId: string) {
  const res = await call(url, 'GET', `/admin/organizations/${organizationId}/deletion`, { admin: true });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.deletion;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

describeWithPostgres('deleting a large organization (a job in batches)', () => {
  let db: TestDatabase;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    service = await startService(db.url);
  }, 120_000);
  afterAll(async () => {
    await stopService(service);
    await db?.stop();
  });

  it(
    'answers at once, reports its progress, finishes, and holds up no other organization meanwhile',
    { timeout: 600_000 },
    async () => {
      const url = service!.url;
      const big = await createMerchantOn(url);
      const other = await createMerchantOn(url);
      const generated = await timed(() =>
        generate(db.url, big.organizationId, big.programId, { affiliates: 49, clicks: 1_000_000, sales: 10_000 }),
      );
      // The other organization: a sale with its pending entry, to approve while the deletion runs.
      const sale = await call(url, 'POST', '/api/conversions', {
        key: other.key,
        body: { external_id: 'other-1', amount: 40, ref: other.slug },
      });
      expect(sale.status, JSON.stringify(sale.body)).toBe(201);
      const [pending] = (await call(url, 'GET', '/api/commissions', { key: other.key })).body.data.commissions;
      expect(pending.status).toBe('pending');

      const before = await withDatabase(db.url, (c) => rowsOf(c, big.organizationId));
      expect(before).toMatchObject({
        clicks: 1_000_000,
        customers: 10_000,
        conversions: 10_000,
        commissions: 10_000,
        affiliates: 50,
      });
      expect(before.report_affiliate_days).toBeGreaterThan(0);

      const asked = await timed(() =>
        call(url, 'DELETE', `/admin/organizations/${big.organizationId}`, { admin: true }),
      );
      expect(asked.value.status, JSON.stringify(asked.value.body)).toBe(202);
      expect(asked.ms).toBeLessThan(2_000);
      expect((await call(url, 'GET', '/api/me', { key: big.key })).status).toBe(401);

      // Progress: some clicks deleted, not all, while running.
      await waitFor(
        async () => (await deletionOf(url, big.organizationId)).deleted.clicks > 0,
        60_000,
        'the first clicks deleted',
      );
      const midway = await deletionOf(url, big.organizationId);
      expect(midway.status).toBe('running');
      expect(midway.deleted.clicks).toBeLessThan(1_000_000);
      expect(midway.deleted.report_affiliate_days).toBe(before.report_affiliate_days);

      // Meanwhile the other organization's approval and a new conversion are answered promptly.
      const approval = await timed(() =>
        call(url, 'POST', `/api/commissions/${pending.id}/approve`, { key: other.key, body: {} }),
      );
      expect(approval.value.status, JSON.stringify(approval.value.body)).toBe(200);
      expect(approval.value.body.data.commission.status).toBe('approved');
      const conversion = await timed(() =>
        call(url, 'POST', '/api/conversions', {
          key: other.key,
          body: { external_id: 'other-2', amount: 60, ref: other.slug },
        }),
      );
      expect(conversion.value.status, JSON.stringify(conversion.value.body)).toBe(201);
      expect(approval.ms).toBeLessThan(2_000);
      expect(conversion.ms).toBeLessThan(2_000);
      const during = await deletionOf(url, big.organizationId);
      expect(during.status).toBe('running');
      expect(during.deleted.clicks).toBeLessThan(1_000_000);
      const otherRows = await facts(db.url, other.organizationId);

      await waitFor(
        async () => (await deletionOf(url, big.organizationId)).status === 'completed',
        400_000,
        'the deletion completed',
      );
      const done = await deletionOf(url, big.organizationId);
      const ms = Date.parse(done.finished_at) - Date.parse(done.requested_at);
      console.log(
        `generated in ${Math.round(generated.ms)} ms; deleted in ${ms} ms; approval ${Math.round(approval.ms)} ms, conversion ${Math.round(conversion.ms)} ms while it ran`,
      );
      expect(done.deleted).toMatchObject({ ...before, organizations: 2, api_keys: 2 });
      expect(
        Object.values(await withDatabase(db.url, (c) => rowsOf(c, big.organizationId))).every((n) => n === 0),
      ).toBe(true);
      expect(await facts(db.url, other.organizationId)).toEqual(otherRows);
      expect((await call(url, 'GET', '/api/commissions', { key: other.key })).body.data.commissions).toHaveLength(2);
      // The receipt stays, and says the same.
      expect(
        await withDatabase(
          db.url,
          async (c) =>
            (
              await c.query(`select count(*)::int as n from data_deletions where organization_id = $1`, [
                big.organizationId,
              ])
            ).rows,
        ),
      ).toEqual([{ n: 1 }]);
    },
  );

  it(
    'a kill -9 mid-way loses nothing: the restarted service finishes it, counts every row once, and touches no other organization',
    { timeout: 600_000 },
    async () => {
      const big = await createMerchantOn(service!.url);
      const other = await createMerchantOn(service!.url);
      await generate(db.url, big.organizationId, big.programId, { affiliates: 9, clicks: 200_000, sales: 2_000 });
      expect(
        (
          await call(service!.url, 'POST', '/api/conversions', {
            key: other.key,
            body: { external_id: 'kept-1', amount: 40, ref: other.slug },
          })
        ).status,
      ).toBe(201);
      const before = await withDatabase(db.url, (c) => rowsOf(c, big.organizationId));
      const otherBefore = await facts(db.url, other.organizationId);

      expect(
        (await call(service!.url, 'DELETE', `/admin/organizations/${big.organizationId}`, { admin: true })).status,
      ).toBe(202);
      await waitFor(
        async () => (await deletionOf(service!.url, big.organizationId)).deleted.clicks > 0,
        60_000,
        'the first clicks deleted',
      );
      service!.child.kill('SIGKILL');
      expect((await service!.exited).signal).toBe('SIGKILL');
      const [cut] = await withDatabase(
        db.url,
        async (c) =>
          (await c.query(`select status, deleted from data_deletions where organization_id = $1`, [big.organizationId]))
            .rows,
      );
      expect(cut.status).toBe('running');
      expect(cut.deleted.clicks).toBeGreaterThan(0);
      expect(cut.deleted.clicks).toBeLessThan(200_000);
      expect((await withDatabase(db.url, (c) => rowsOf(c, big.organizationId))).clicks).toBe(
        200_000 - cut.deleted.clicks,
      );

      service = await startService(db.url);
      await waitFor(
        async () => (await deletionOf(service!.url, big.organizationId)).status === 'completed',
        400_000,
        'the deletion completed after the restart',
      );
      const done = await deletionOf(service.url, big.organizationId);
      expect(done.deleted).toEqual({ ...before, organizations: 2, api_keys: 2 });
      expect(
        Object.values(await withDatabase(db.url, (c) => rowsOf(c, big.organizationId))).every((n) => n === 0),
      ).toBe(true);
      expect(await facts(db.url, other.organizationId)).toEqual(otherBefore);
    },
  );

  it(
    'a reset of a large test twin answers 202 at once, shows its progress, and finishes; live data and the test settings stay',
    { timeout: 600_000 },
    async () => {
      const url = service!.url;
      const m = await createMerchantOn(url);
      const issued = await call(url, 'POST', `/admin/organizations/${m.organizationId}/api-keys`, {
        admin: true,
        body: { mode: 'test' },
      });
      expect(issued.status).toBe(201);
      const testKey: string = issued.body.data.api_key;
      const twin = await withDatabase(
        db.url,
        async (c) =>
          (
            await c.query<{ id: string }>('select id from organizations where live_organization_id = $1', [
              m.organizationId,
            ])
          ).rows[0].id,
      );
      const program = await call(url, 'POST', '/api/programs', {
        key: testKey,
        body: { name: 'Test', commission_value: 10 },
      });
      expect(program.status).toBe(201);
      // Large enough that the reset outlasts the request's wait (TEST_DATA_RESET_WAIT_MS, 5 s) on an
      // idle machine too: 300,000 clicks were reset in 3.6 s once every foreign key had its index.
      await generate(db.url, twin, program.body.data.program.id, { affiliates: 10, clicks: 1_000_000, sales: 2_000 });
      expect(
        (
          await call(url, 'POST', '/api/conversions', {
            key: m.key,
            body: { external_id: 'live-1', amount: 40, ref: m.slug },
          })
        ).status,
      ).toBe(201);
      const before = await withDatabase(db.url, (c) => rowsOf(c, twin));
      const liveBefore = await facts(db.url, m.organizationId);

      const asked = await timed(() => call(url, 'DELETE', '/api/test-data', { key: testKey, timeoutMs: 30_000 }));
      expect(asked.value.status, JSON.stringify(asked.value.body)).toBe(202);
      expect(asked.ms).toBeLessThan(8_000);
      expect(asked.value.body.data.deletion).toMatchObject({
        organization_id: twin,
        status: 'running',
        finished_at: null,
      });
      expect(asked.value.body.data.deleted.clicks).toBeLessThan(1_000_000);
      const progress = await call(url, 'GET', '/api/test-data/deletion', { key: testKey });
      expect(progress.status).toBe(200);
      expect(progress.body.data.deletion.id).toBe(asked.value.body.data.deletion.id);
      // Asked again while it runs: the same deletion.
      const again = await call(url, 'DELETE', '/api/test-data', { key: testKey, timeoutMs: 30_000 });
      expect(again.body.data.deletion.id).toBe(asked.value.body.data.deletion.id);

      const poll = async () => (await call(url, 'GET', '/api/test-data/deletion', { key: testKey })).body.data.deletion;
      await waitFor(async () => (await poll()).status === 'completed', 400_000, 'the reset completed');
      const done = await poll();
      const kept = [
        'organizations',
        'api_keys',
        'integrations',
        'webhook_endpoints',
        'users',
        'accounts',
        'sessions',
        'invitations',
      ];
      expect(done.deleted).toEqual(Object.fromEntries(Object.entries(before).filter(([t]) => !kept.includes(t))));
      const after = await withDatabase(db.url, (c) => rowsOf(c, twin));
      for (const [table, n] of Object.entries(after)) expect(n, table).toBe(kept.includes(table) ? before[table] : 0);
      expect(await facts(db.url, m.organizationId)).toEqual(liveBefore);
      expect((await call(url, 'GET', '/api/me', { key: testKey })).status).toBe(200);
      expect((await call(url, 'GET', '/api/programs', { key: testKey })).body.data.programs).toEqual([]);
    },
  );
});
