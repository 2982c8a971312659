/**
 * The seeded database the ledger's and the dashboard's benchmarks share (bench/ledger-seeded.ts,
 * bench/dashboard-seeded.ts): the service started as `npm start` runs it (the bundle, with the
 * start script's node flags) on a database seeded with set-based SQL (generate_series): 3 programs,
 * 20 000 affiliates (a few earn most), BENCH_CONVERSIONS conversions (default 2 million) over two
 * years with one sale commission each in the status its age gives it, adjustments, clicks and
 * customers in proportion (1.5 clicks and 0.125 customers per conversion: mostly renewals). No
 * ANALYZE and no VACUUM: the plans must not depend on statistics (autovacuum may be off).
 *
 * BENCH_DB names the database: created and seeded when missing, reused as it is when a run before
 * seeded it (the seed takes about 7 minutes), and kept at the end; BENCH_DROP=1 drops it at the
 * end. Without BENCH_DB a database of a random name is seeded and dropped (BENCH_KEEP=1 keeps it).
 * The service applies pending migrations to a reused database as `npm start` would; the
 * organization's report deltas are folded before the measures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import pg from 'pg';
import { bundle } from '../server/bundle.js';
import { startNodeFlags, waitFor } from './service-process.js';
import { compiled, contributionsOfRows, deltasInsertSql } from '../server/src/modules/reports/report-contributions.js';
import { foldIn } from '../server/src/modules/reports/report-fold.js';

const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const CONVERSIONS = Number(process.env.BENCH_CONVERSIONS ?? 2_000_000);
const AFFILIATES = 20_000;
export const ADMIN_TOKEN = 'bench-admin-token-0123456789';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export async function call(
  method: string,
  url: string,
  auth: string | Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: any; ms: number }> {
  const started = performance.now();
  const headers = typeof auth === 'string' ? { authorization: auth } : auth;
  const res = await fetch(url, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return { status: res.status, body: JSON.parse(text), ms };
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

export interface SeededProgram {
  id: string;
  currency: string;
  hold: number | null;
}

export interface SeededService {
  base: string;
  /** `Bearer <the organization's API key>`. */
  auth: string;
  organizationId: string;
  programs: SeededProgram[];
  dbName: string;
  /** A direct connection to the seeded database. */
  db: pg.Client;
  /** Stops the service; drops the database unless it is to be kept. */
  stop(): Promise<void>;
}

async function seed(
  db: pg.Client,
  organizationId: string,
  programs: { id: string; currency: string; hold: number | null }[],
): Promise<void> {
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
    [organizationId, p1.id, p2.id, p3.id],
  );
  // Their slugs are their link tokens (Migration20270121000000_link_tokens): what a click resolves.
  await step(
    'link tokens',
    `insert into affiliate_link_tokens (organization_id, token, affiliate_id, program_id)
     select organization_id, slug, id, program_id from affiliates where organization_id = $1`,
    [organizationId],
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

/**
 * The service on the seeded database, the fold caught up. What a reused database needs (the API
 * key, the programs) is in its table bench_seed, written once the seed is complete.
 */
export async function seededService(): Promise<SeededService> {
  const named = process.env.BENCH_DB;
  if (named !== undefined && !/^[a-z0-9_]{1,60}$/.test(named))
    throw new Error('BENCH_DB: lower-case letters, digits and _ only');
  const dbName = named ?? `aa_ledger_bench_${randomBytes(3).toString('hex')}`;
  const keep = named ? !process.env.BENCH_DROP : Boolean(process.env.BENCH_KEEP);
  const dbUrl = (() => {
    const u = new URL(ADMIN_URL);
    u.pathname = `/${dbName}`;
    return u.toString();
  })();
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const exists = (await admin.query('select 1 from pg_database where datname = $1', [dbName])).rowCount === 1;
  if (!exists) await admin.query(`create database "${dbName}"`);
  const port = await freePort();
  let stopping = false;
  const script = await bundle('server/src/main.ts', 'server/dist/main.mjs');
  const service: ChildProcess = spawn(process.execPath, [...startNodeFlags(), script], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: dbUrl,
      ADMIN_TOKEN,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      API_RATE_LIMIT_MAX: '1000000',
      SIGN_IN_RATE_LIMIT_MAX: '1000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  service.on('exit', (code, signal) => {
    if (!stopping) console.error(`service exited early (${code ?? signal})`);
  });
  const db = new pg.Client({ connectionString: dbUrl });
  const stop = async () => {
    stopping = true;
    service.kill('SIGTERM');
    await db.end().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1500));
    if (keep) console.log(`kept database ${dbName}${named ? ' (BENCH_DROP=1 drops it)' : ''}`);
    else await admin.query(`drop database if exists "${dbName}" with (force)`);
    await admin.end();
  };
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitFor(`${base}/health`, 300_000);
    await db.connect();
    const seeded = exists && (await db.query(`select to_regclass('bench_seed') is not null as found`)).rows[0].found;
    let info: { api_key: string; organization_id: string; programs: SeededProgram[] };
    if (seeded) {
      info = (await db.query('select api_key, organization_id, programs from bench_seed')).rows[0];
      console.log(`reusing the seeded database ${dbName}`);
    } else {
      if (exists)
        throw new Error(
          `BENCH_DB: the database ${dbName} exists but was not seeded completely; drop it (or name another)`,
        );
      info = await seedOrganization(base, db);
    }
    await foldAll(db, info.organization_id);
    return {
      base,
      auth: `Bearer ${info.api_key}`,
      organizationId: info.organization_id,
      programs: info.programs,
      dbName,
      db,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function seedOrganization(
  base: string,
  db: pg.Client,
): Promise<{ api_key: string; organization_id: string; programs: SeededProgram[] }> {
  const org = await call('POST', `${base}/admin/organizations`, `Bearer ${ADMIN_TOKEN}`, { name: 'Ledger bench' });
  const auth = `Bearer ${org.body.data.api_key as string}`;
  const organizationId: string = org.body.data.organization.id;
  const programs: SeededProgram[] = [];
  for (const [name, currency, hold, autoApprove] of [
    ['Monthly', 'USD', 30, true],
    ['Annual', 'USD', 14, true],
    ['Europe', 'EUR', 7, false],
  ] as const) {
    const p = await call('POST', `${base}/api/programs`, auth, {
      name,
      commission_value: 30,
      currency,
      hold_days: hold,
      auto_approve: autoApprove,
    });
    programs.push({ id: p.body.data.program.id as string, currency, hold: autoApprove ? hold : null });
  }
  console.log(`seeding ${CONVERSIONS} conversions, ${AFFILIATES} affiliates, 3 programs (no ANALYZE, no VACUUM)`);
  const seedStarted = Date.now();
  await seed(db, organizationId, programs);
  // The seed writes the rows with SQL: what they count in the reports is written as their writers
  // write it (report-contributions.ts), then folded (foldAll).
  const own = (table: string) => `(select * from ${table} where organization_id = $1::uuid)`;
  await db.query(deltasInsertSql(contributionsOfRows(own)), [organizationId]);
  await db.query('checkpoint').catch(() => undefined);
  const counts = (
    await db.query(`select (select count(*) from clicks) as clicks, (select count(*) from customers) as customers, (select count(*) from conversions) as conversions,
      (select count(*) from commissions) as commissions, (select string_agg(status || ' ' || n, ', ') from (select status, count(*) as n from commissions group by 1 order by 2 desc) s) as statuses`)
  ).rows[0];
  console.log(
    `seeded in ${((Date.now() - seedStarted) / 1000).toFixed(0)} s: ${counts.clicks} clicks, ${counts.customers} customers, ${counts.conversions} conversions, ${counts.commissions} commissions (${counts.statuses})`,
  );
  const info = { api_key: org.body.data.api_key as string, organization_id: organizationId, programs };
  // The plain API key of a benchmark organization, so that a later run can reuse the database.
  await db.query(
    `create table bench_seed as select $1::text as api_key, $2::uuid as organization_id, $3::jsonb as programs`,
    [info.api_key, organizationId, JSON.stringify(programs)],
  );
  return info;
}

/**
 * Folds the organization's due deltas from here, in large steps (the service's folder would take
 * them in steps of 2 000 within its statement timeout: slower for a seed of millions of rows).
 */
async function foldAll(db: pg.Client, organizationId: string): Promise<void> {
  const started = Date.now();
  const taken = await foldIn(
    async (query) => {
      const { sql, parameters } = compiled(query).compile();
      return (await db.query(sql, [...parameters])).rows;
    },
    organizationId,
    200_000,
  );
  const summaries = (
    await db.query(
      `select (select count(*) from report_affiliate_totals) as months, (select count(*) from report_program_days) as days,
        (select count(*) from report_deltas) as held`,
    )
  ).rows[0];
  console.log(
    `folded ${taken} deltas in ${((Date.now() - started) / 1000).toFixed(0)} s: ${summaries.months} affiliate running-total rows, ${summaries.days} program-day rows, ${summaries.held} scheduled approvals not due yet`,
  );
}
