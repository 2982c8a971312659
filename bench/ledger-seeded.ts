/**
 * npm run bench:ledger: the ledger's reads and the payout run on a seeded database, through the
 * real HTTP service (bench/seeded-database.ts: the seed, BENCH_DB to keep and reuse one, its report
 * deltas folded first: the reports are exact before, only slower), and prints
 * p50 / p95 of sequential requests (BENCH_REQUESTS each, default 30, after 3 unmeasured):
 * GET /api/reports/affiliates for a month and for a year (calendar-aligned, and rolling), the
 * time series by day for a year, GET /api/commissions?status=approved (first page), and the time of
 * one POST /api/payouts gathering every approved entry, which it then takes back (SQL: the payouts
 * deleted, their entries released as a cancel does) so that a reused database stays as seeded.
 * With BENCH_EXPLAIN=1 it prints the EXPLAIN (ANALYZE, BUFFERS) of the report statements and of
 * the commissions list; BENCH_EXPLAIN=all also of the payout run (rolled back). Ports: random free ones on 127.0.0.1.
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { call, percentile, seededService } from './seeded-database.js';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { Tables } from '../server/src/db/database.js';
import { commissionsPage } from '../server/src/modules/commissions/commissions.repository.js';
import { createPayouts } from '../server/src/modules/payouts/payouts.repository.js';
import {
  affiliatesStatement,
  READING_SETTINGS,
  timeseriesStatement,
} from '../server/src/modules/reports/reports.statements.js';
import { summarySpan } from '../server/src/modules/reports/reports.service.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 30);
const DAY = 86_400_000;

async function main(): Promise<void> {
  const { base, auth, organizationId, programs, db, stop } = await seededService();
  try {
    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
    const yearAgo = new Date(Date.UTC(now.getUTCFullYear() - 1, now.getUTCMonth(), 1));
    const q = (from: Date, to: Date) => `from=${from.toISOString()}&to=${to.toISOString()}`;
    const reads: [string, string][] = [
      ['reports/affiliates, last month (calendar)', `/api/reports/affiliates?${q(lastMonth, monthStart)}`],
      ['reports/affiliates, 12 months (calendar)', `/api/reports/affiliates?${q(yearAgo, monthStart)}`],
      ['reports/affiliates, 12 months, page 2', ''],
      [
        'reports/timeseries day, last 365 days',
        `/api/reports/timeseries?interval=day&${q(new Date(now.getTime() - 365 * DAY), now)}`,
      ],
      [
        'reports/timeseries month, 12 months, 1 program',
        `/api/reports/timeseries?interval=month&program_id=${programs[0].id}&${q(yearAgo, monthStart)}`,
      ],
      ['commissions?status=approved, first page', `/api/commissions?status=approved`],
      // Partial months at both ends are aggregated from the raw rows: the slow case (see README).
      [
        'reports/affiliates, last 30 days (rolling)',
        `/api/reports/affiliates?${q(new Date(now.getTime() - 30 * DAY), now)}`,
      ],
      [
        'reports/affiliates, last 365 days (rolling)',
        `/api/reports/affiliates?${q(new Date(now.getTime() - 365 * DAY), now)}`,
      ],
    ];
    const firstPage = await call('GET', `${base}${reads[1][1]}`, auth);
    if (firstPage.body.data.next_cursor)
      reads[2][1] = `${reads[1][1]}&cursor=${firstPage.body.data.next_cursor as string}`;
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
      console.log(
        `${name.padEnd(48)} ${percentile(times, 50).toFixed(1).padStart(7)}  ${percentile(times, 95).toFixed(1).padStart(7)}  ${times[times.length - 1].toFixed(1).padStart(7)}  ${rows}`,
      );
    }

    const approved = (
      await db.query(
        `select count(*) as n, sum(amount) as total from commissions where organization_id = $1 and (status = 'approved' or (status = 'pending' and approves_at <= now()))
       and not exists (select 1 from payout_items i where i.organization_id = $1 and i.commission_id = commissions.id)`,
        [organizationId],
      )
    ).rows[0];
    try {
      const payout = await call('POST', `${base}/api/payouts`, auth, {});
      const payouts = payout.body.data.payouts as { amount: number; commission_count: number }[];
      console.log(
        `\nPOST /api/payouts (every approved entry: ${approved.n} entries, ${approved.total} in total): ${payout.ms.toFixed(0)} ms, ${payouts.length} payouts carrying ${payouts.reduce((s, p) => s + p.commission_count, 0)} entries`,
      );
      const after = await call('GET', `${base}${reads[1][1]}`, auth);
      console.log(`reports/affiliates, 12 months, right after the payout run: ${after.ms.toFixed(1)} ms`);
      await restorePayable(
        db,
        payouts.map((p) => (p as unknown as { id: string }).id),
      );
    } catch (err) {
      console.log(
        `\nPOST /api/payouts (every approved entry: ${approved.n} entries) failed: ${(err as Error).message.slice(0, 200)}`,
      );
    }
    if (process.env.BENCH_EXPLAIN) await explain(db, organizationId, { lastMonth, monthStart, yearAgo, now });
  } finally {
    console.log(
      `load average: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    await stop();
  }
}

/** Takes back a payout run (its entries released as POST /api/payouts/{id}/cancel does, the payouts deleted): the seed stays reusable. */
async function restorePayable(db: pg.Client, payoutIds: string[]): Promise<void> {
  // Deleting a payout checks the foreign keys that reference it (payout_items,
  // payouts.retried_by_payout_id): without statistics each check is planned as a scan of the organization's 2
  // million entries (sequential, or of commissions_list_idx with sequential scans off), 19 500
  // times: hours. Nothing references these payouts once their items are deleted (pending: no entry
  // records them), so the checks are skipped for this delete (replica mode: the bench connects as
  // the database's owner, a superuser here).
  await db.query('begin');
  try {
    await db.query(`set local session_replication_role = replica`);
    await db.query(`delete from payout_items where payout_id = any($1::uuid[])`, [payoutIds]);
    await db.query(`delete from payouts where id = any($1::uuid[])`, [payoutIds]);
    await db.query('commit');
  } catch (err) {
    await db.query('rollback');
    throw err;
  }
}

/** The report statements' plans, as the service runs them (its transaction settings included). */
async function explain(
  db: pg.Client,
  organizationId: string,
  t: { lastMonth: Date; monthStart: Date; yearAgo: Date; now: Date },
): Promise<void> {
  const window = (from: Date, to: Date) => ({
    organizationId,
    programId: null,
    currency: null,
    from,
    to,
    ...summarySpan(from, to),
  });
  const statements: [string, { text: string; values: unknown[] }][] = [
    ['affiliates, 12 months (calendar)', affiliatesStatement(window(t.yearAgo, t.monthStart), null, undefined, 51)],
    [
      'affiliates, last 30 days (rolling)',
      affiliatesStatement(window(new Date(t.now.getTime() - 30 * DAY), t.now), null, undefined, 51),
    ],
    ['timeseries day, last 365 days', timeseriesStatement(window(new Date(t.now.getTime() - 365 * DAY), t.now), 'day')],
  ];
  // The commissions list as the service builds it (kysely, compiled only).
  const compiler = new Kysely<Tables>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  const approved = commissionsPage(compiler, organizationId, { status: 'approved' }, undefined, 50).compile();
  statements.push([
    'commissions?status=approved, first page',
    { text: approved.sql, values: [...approved.parameters] },
  ]);
  // The payout run, rolled back (BENCH_EXPLAIN=all: it costs as much as the run itself).
  if (process.env.BENCH_EXPLAIN === 'all') {
    const run = createPayouts({
      organizationId,
      programId: null,
      currency: null,
      approvedBefore: null,
      affiliateId: null,
    }).compile(compiler);
    statements.push([
      'POST /api/payouts, every approved entry (rolled back)',
      { text: run.sql, values: [...run.parameters] },
    ]);
  }
  for (const [name, statement] of statements) {
    await db.query('begin');
    // The report statements run with the reports' settings (ReportsRepository.reading), the others as they are.
    if (name.startsWith('affiliates') || name.startsWith('timeseries')) await db.query(READING_SETTINGS);
    const plan = await db.query(`explain (analyze, buffers, costs off) ${statement.text}`, statement.values);
    await db.query('rollback');
    console.log(`\nEXPLAIN (ANALYZE, BUFFERS) ${name}:\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}`);
  }
}

await main();
