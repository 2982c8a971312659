/**
 * npm run bench:ledger: the ledger's reads and the payout run on a seeded database, through the
 * real HTTP service (started as `npm start` runs it: the bundle, with the start script's node
 * flags), on a database of its own that it drops at the end (BENCH_KEEP=1 keeps it).
 *
 * Seeds with set-based SQL (generate_series): 3 programs, 20 000 affiliates (a few earn most),
 * BENCH_CONVERSIONS conversions (default 2 million) spread over two years with one sale commission
 * each in the statuses their age gives them (paid, approved, pending in their hold, on hold,
 * rejected, reversed after a full refund; partial refunds), adjustments, clicks and customers in
 * proportion (1.5 clicks and 0.125 customers per conversion: mostly renewals). No ANALYZE and no
 * VACUUM: the plans must not depend on statistics (autovacuum may be off). Then waits for the
 * service's background fold to catch up (the reports are exact before, only slower), and prints
 * p50 / p95 of sequential requests (BENCH_REQUESTS each, default 30, after 3 unmeasured):
 * GET /api/reports/affiliates for a month and for a year (calendar-aligned, and rolling), the
 * time series by day for a year, GET /api/commissions?status=approved (first page), and the time of
 * one POST /api/payouts gathering every approved entry. With BENCH_EXPLAIN=1 it prints the
 * EXPLAIN (ANALYZE, BUFFERS) of the report statements. Ports: random free ones on 127.0.0.1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import pg from 'pg';
import { bundle } from '../server/bundle.js';
import { affiliatesStatement, READING_SETTINGS, timeseriesStatement } from '../server/src/modules/reports/reports.repository.js';
import { summarySpan } from '../server/src/modules/reports/reports.service.js';

const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CONVERSIONS = Number(process.env.BENCH_CONVERSIONS ?? 2_000_000);
const AFFILIATES = 20_000;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 30);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const DAY = 86_400_000;

const dbName = `aa_ledger_bench_${randomBytes(3).toString('hex')}`;
const dbUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${dbName}`;
  return u.toString();
})();

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The node flags of `npm start` (package.json), as bench/run.ts takes them. */
function startNodeFlags(): string[] {
  const start: string = JSON.parse(readFileSync('package.json', 'utf8')).scripts.start;
  const command = /\bnode((?:\s+--\S+)*)\s+server\/dist\/main\.mjs/.exec(start);
  if (!command) throw new Error(`bench: cannot find "node … server/dist/main.mjs" in the start script: ${start}`);
  return command[1]!.trim().split(/\s+/).filter(Boolean);
}

let stopping = false;
function startService(script: string, port: number): ChildProcess {
  const child = spawn(process.execPath, [...startNodeFlags(), script], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: dbUrl, ADMIN_TOKEN, NODE_ENV: 'production', LOG_LEVEL: 'warn', API_RATE_LIMIT_MAX: '1000000' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.on('exit', (code, signal) => {
    if (!stopping) console.error(`service exited early (${code ?? signal})`);
  });
  return child;
}

async function waitFor(url: string, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`${url} did not come up`);
}

async function call(method: string, url: string, auth: string, body?: unknown): Promise<{ status: number; body: any; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return { status: res.status, body: JSON.parse(text), ms };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function seed(db: pg.Client, organizationId: string, programs: { id: string; currency: string; hold: number | null }[]): Promise<void> {
  const step = async (label: string, text: string, values: unknown[] = []) => {
    const started = Date.now();
    const r = await db.query(text, values);
    console.log(`  ${label}: ${r.rowCount ?? ''} rows in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  };
  const [p1, p2, p3] = programs;
  // Affiliates a0..a19999, program by n % 3; bench_aff maps a number to its id for the joins below.
  await step(
    'affiliates',
    `insert into affiliates (id, organization_id, program_id, email, slug, name, created_at)
     select gen_random_uuid(), $1, (array[$2::uuid, $3::uuid, $4::uuid])[1 + g % 3], 'a' || g || '@example.com', 'a' || g, 'Affiliate ' || g, now() - interval '2 years'
     from generate_series(0, ${AFFILIATES - 1}) g`,
    [organizationId, p1!.id, p2!.id, p3!.id],
  );
  await db.query(
    `create unlogged table bench_aff as
     select (substring(slug from 2))::int as n, a.id, a.program_id, p.currency::text as currency, p.hold_days, p.auto_approve
     from affiliates a join programs p on p.id = a.program_id where a.organization_id = $1`,
    [organizationId],
  );
  await db.query('create unique index on bench_aff (n)');
  // A skewed choice of affiliate: n = floor(20000 * u^3), so that a fifth of them earns most.
  const pick = `(floor(${AFFILIATES} * power(random(), 3)))::int`;
  const span = `interval '730 days'`;
  await step(
    'clicks',
    `insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, ip, occurred_at, created_at)
     select gen_random_uuid(), $1, a.id, a.program_id, 'ck_' || g, '203.0.113.' || (g % 250), t, t
     from (select g, ${pick} as n, now() - ${span} + (g::float8 / ${Math.round(CONVERSIONS * 1.5)}) * ${span} as t from generate_series(1, ${Math.round(CONVERSIONS * 1.5)}) g) s
     join bench_aff a on a.n = s.n
     order by g`,
    [organizationId],
  );
  await step(
    'customers',
    `insert into customers (id, organization_id, customer_id, status, affiliate_id, program_id, first_conversion_at, created_at, updated_at)
     select gen_random_uuid(), $1, 'cus_' || g, 'active', a.id, a.program_id, t, t, t
     from (select g, ${pick} as n, now() - ${span} + (g::float8 / ${Math.round(CONVERSIONS / 8)}) * ${span} as t from generate_series(1, ${Math.round(CONVERSIONS / 8)}) g) s
     join bench_aff a on a.n = s.n
     order by g`,
    [organizationId],
  );
  // Conversions in time order; 3 % refunded (half of them in full).
  await step(
    'conversions',
    `insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, gross_commission_amount, customer_id, affiliate_id, program_id,
                              status, refunded_amount, occurred_at, created_at)
     select gen_random_uuid(), $1, 'in_' || g, amount, a.currency, case when g % 8 = 0 then 'initial' else 'recurring' end,
       round(amount * 0.3 * (1 - refunded / amount), 2), round(amount * 0.3, 2), 'cus_' || (1 + g % ${Math.round(CONVERSIONS / 8)}), a.id, a.program_id,
       case when refunded = amount then 'reversed' else 'approved' end, refunded, t, t
     from (
       select g, n, t, amount, case when r < 0.015 then amount when r < 0.03 then round(amount / 2, 2) else 0 end as refunded
       from (select g, ${pick} as n, now() - ${span} + (g::float8 / ${CONVERSIONS}) * ${span} as t, round((9 + random() * 191)::numeric, 2) as amount, random() as r
             from generate_series(1, ${CONVERSIONS}) g) x
     ) s
     join bench_aff a on a.n = s.n
     order by g`,
    [organizationId],
  );
  // One sale entry per conversion, its status by age: paid when older than 60 days (mostly),
  // pending within the hold, approved (by itself, stored pending, or by the merchant) after it.
  await step(
    'commissions (sales)',
    `insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, customer_id, approves_at, approved_at, created_at, updated_at)
     select gen_random_uuid(), c.organization_id, 'sale',
       case
         when c.status = 'reversed' then 'reversed'
         when r < 0.02 then 'rejected'
         when r < 0.03 and age < interval '60 days' then 'on_hold'
         when age >= interval '60 days' and r < 0.97 then 'paid'
         when age >= interval '60 days' then 'approved'
         when not a.auto_approve then case when r < 0.6 then 'approved' else 'pending' end
         when r < 0.1 then 'approved'
         else 'pending'
       end,
       case when c.status = 'reversed' then c.gross_commission_amount else round(c.gross_commission_amount * (1 - c.refunded_amount / c.amount), 2) end, c.currency, c.affiliate_id, c.program_id, c.id, c.customer_id,
       case when a.auto_approve then c.occurred_at + make_interval(days => a.hold_days) end, null, c.created_at, c.created_at
     from (select c.*, random() as r, now() - c.occurred_at as age from conversions c where c.organization_id = $1) c
     join bench_aff a on a.id = c.affiliate_id
     where round(c.gross_commission_amount * (1 - c.refunded_amount / c.amount), 2) > 0 or c.status = 'reversed'
     order by c.created_at`,
    [organizationId],
  );
  await step(
    'commissions (adjustments)',
    `insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, description, approved_at, created_at, updated_at)
     select gen_random_uuid(), $1, 'adjustment', case when g % 10 < 8 then 'paid' else 'approved' end, case when g % 7 = 0 then -5 else 25 end, a.currency, a.id, a.program_id, 'bonus', t, t, t
     from (select g, ${pick} as n, now() - ${span} + (g::float8 / 20000) * ${span} as t from generate_series(1, 20000) g) s
     join bench_aff a on a.n = s.n order by g`,
    [organizationId],
  );
  await db.query('drop table bench_aff');
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${dbName}"`);
  const port = await freePort();
  const service = startService(await bundle('server/src/main.ts', 'server/dist/main.mjs'), port);
  const db = new pg.Client({ connectionString: dbUrl });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitFor(`${base}/health`);
    await db.connect();
    const org = await call('POST', `${base}/admin/organizations`, `Bearer ${ADMIN_TOKEN}`, { name: 'Ledger bench' });
    const auth = `Bearer ${org.body.data.api_key as string}`;
    const organizationId: string = org.body.data.organization.id;
    const programs = [];
    for (const [name, currency, hold, autoApprove] of [
      ['Monthly', 'USD', 30, true],
      ['Annual', 'USD', 14, true],
      ['Europe', 'EUR', 7, false],
    ] as const) {
      const p = await call('POST', `${base}/api/programs`, auth, { name, commission_value: 30, currency, hold_days: hold, auto_approve: autoApprove });
      programs.push({ id: p.body.data.program.id as string, currency, hold: autoApprove ? hold : null });
    }

    console.log(`seeding ${CONVERSIONS} conversions, ${AFFILIATES} affiliates, 3 programs (no ANALYZE, no VACUUM)`);
    const seedStarted = Date.now();
    await seed(db, organizationId, programs);
    // The seed back-dates created_at behind the watermark of the service's first (empty) fold.
    await db.query('select report_reset()');
    await db.query('checkpoint').catch(() => undefined);
    const counts = (
      await db.query(`select (select count(*) from clicks) as clicks, (select count(*) from customers) as customers, (select count(*) from conversions) as conversions,
        (select count(*) from commissions) as commissions, (select string_agg(status || ' ' || n, ', ') from (select status, count(*) as n from commissions group by 1 order by 2 desc) s) as statuses`)
    ).rows[0];
    console.log(`seeded in ${((Date.now() - seedStarted) / 1000).toFixed(0)} s: ${counts.clicks} clicks, ${counts.customers} customers, ${counts.conversions} conversions, ${counts.commissions} commissions (${counts.statuses})`);

    // The service folds in the background (every 10 s, rows older than a minute): wait for it.
    const foldStarted = Date.now();
    for (;;) {
      const { rows } = await db.query(`select folded_before > now() - interval '90 seconds' as caught_up, folded_before from report_fold_state`);
      if (rows[0].caught_up) break;
      if (process.env.BENCH_VERBOSE) console.log(`  fold at ${(rows[0].folded_before as Date).toISOString?.() ?? rows[0].folded_before} after ${((Date.now() - foldStarted) / 1000).toFixed(0)} s`);
      if (Date.now() - foldStarted > 30 * 60_000) throw new Error('the fold did not catch up in 30 minutes');
      await new Promise((r) => setTimeout(r, 5000));
    }
    const summaries = (await db.query(`select (select count(*) from report_affiliate_totals) as months, (select count(*) from report_program_days) as days, (select count(*) from report_deferred_commissions) as deferred`)).rows[0];
    console.log(
      `background fold caught up in ${((Date.now() - foldStarted) / 1000).toFixed(0)} s: ${summaries.months} affiliate running-total rows, ${summaries.days} program-day rows, ${summaries.deferred} deferred (pending) entries`,
    );

    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
    const yearAgo = new Date(Date.UTC(now.getUTCFullYear() - 1, now.getUTCMonth(), 1));
    const q = (from: Date, to: Date) => `from=${from.toISOString()}&to=${to.toISOString()}`;
    const reads: [string, string][] = [
      ['reports/affiliates, last month (calendar)', `/api/reports/affiliates?${q(lastMonth, monthStart)}`],
      ['reports/affiliates, 12 months (calendar)', `/api/reports/affiliates?${q(yearAgo, monthStart)}`],
      ['reports/affiliates, 12 months, page 2', ''],
      ['reports/timeseries day, last 365 days', `/api/reports/timeseries?interval=day&${q(new Date(now.getTime() - 365 * DAY), now)}`],
      ['reports/timeseries month, 12 months, 1 program', `/api/reports/timeseries?interval=month&program_id=${programs[0]!.id}&${q(yearAgo, monthStart)}`],
      ['commissions?status=approved, first page', `/api/commissions?status=approved`],
      // Partial months at both ends are aggregated from the raw rows: the slow case (see README).
      ['reports/affiliates, last 30 days (rolling)', `/api/reports/affiliates?${q(new Date(now.getTime() - 30 * DAY), now)}`],
      ['reports/affiliates, last 365 days (rolling)', `/api/reports/affiliates?${q(new Date(now.getTime() - 365 * DAY), now)}`],
    ];
    const firstPage = await call('GET', `${base}${reads[1]![1]}`, auth);
    if (firstPage.body.data.next_cursor) reads[2]![1] = `${reads[1]![1]}&cursor=${firstPage.body.data.next_cursor as string}`;
    else reads.splice(2, 1);

    console.log(`\n${REQUESTS} sequential requests each (after 3 unmeasured), through HTTP:`);
    console.log('read                                              p50 ms   p95 ms   max ms  rows');
    for (const [name, path] of reads) {
      const times: number[] = [];
      let rows = 0;
      try {
        for (let i = 0; i < 3; i++) await call('GET', `${base}${path}`, auth);
        for (let i = 0; i < REQUESTS; i++) {
          const r = await call('GET', `${base}${path}`, auth);
          times.push(r.ms);
          rows = (r.body.data.affiliates ?? r.body.data.points ?? r.body.data.commissions ?? []).length;
        }
      } catch (err) {
        console.log(`${name.padEnd(48)} failed: ${(err as Error).message.slice(0, 160)}`);
        continue;
      }
      times.sort((a, b) => a - b);
      console.log(`${name.padEnd(48)} ${percentile(times, 50).toFixed(1).padStart(7)}  ${percentile(times, 95).toFixed(1).padStart(7)}  ${times[times.length - 1]!.toFixed(1).padStart(7)}  ${rows}`);
    }

    const approved = (await db.query(`select count(*) as n, sum(amount) as total from commissions where organization_id = $1 and payout_id is null and (status = 'approved' or (status = 'pending' and approves_at <= now()))`, [organizationId])).rows[0];
    try {
      const payout = await call('POST', `${base}/api/payouts`, auth, {});
      const payouts = payout.body.data.payouts as { amount: number; commission_count: number }[];
      console.log(
        `\nPOST /api/payouts (every approved entry: ${approved.n} entries, ${approved.total} in total): ${payout.ms.toFixed(0)} ms, ${payouts.length} payouts carrying ${payouts.reduce((s, p) => s + p.commission_count, 0)} entries`,
      );
      const after = await call('GET', `${base}${reads[1]![1]}`, auth);
      console.log(`reports/affiliates, 12 months, right after the payout run: ${after.ms.toFixed(1)} ms`);
    } catch (err) {
      console.log(`\nPOST /api/payouts (every approved entry: ${approved.n} entries) failed: ${(err as Error).message.slice(0, 200)}`);
    }
    if (process.env.BENCH_EXPLAIN) await explain(db, organizationId, { lastMonth, monthStart, yearAgo, now });

  } finally {
    stopping = true;
    service.kill('SIGTERM');
    await db.end().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1500));
    if (process.env.BENCH_KEEP) console.log(`kept database ${dbName}`);
    else await admin.query(`drop database if exists "${dbName}" with (force)`);
    await admin.end();
  }
}

/** The report statements' plans, as the service runs them (its transaction settings included). */
async function explain(db: pg.Client, organizationId: string, t: { lastMonth: Date; monthStart: Date; yearAgo: Date; now: Date }): Promise<void> {
  const window = (from: Date, to: Date, grain: 'month' | 'day') => ({ organizationId, programId: null, currency: null, from, to, ...summarySpan(from, to, grain) });
  const statements: [string, { text: string; values: unknown[] }][] = [
    ['affiliates, 12 months (calendar)', affiliatesStatement(window(t.yearAgo, t.monthStart, 'month'), undefined, 51)],
    ['affiliates, last 30 days (rolling)', affiliatesStatement(window(new Date(t.now.getTime() - 30 * DAY), t.now, 'month'), undefined, 51)],
    ['timeseries day, last 365 days', timeseriesStatement(window(new Date(t.now.getTime() - 365 * DAY), t.now, 'day'), 'day')],
  ];
  for (const [name, statement] of statements) {
    await db.query('begin');
    await db.query(READING_SETTINGS);
    const plan = await db.query(`explain (analyze, buffers, costs off) ${statement.text}`, statement.values);
    await db.query('rollback');
    console.log(`\nEXPLAIN (ANALYZE, BUFFERS) ${name}:\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}`);
  }
}

await main();
