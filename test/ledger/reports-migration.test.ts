import { randomBytes } from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { closeOrm, defaultDatabaseTimeouts, initOrm, ormOptions } from '../../server/src/db/orm.js';
import { foldOrganization } from '../../server/src/modules/reports/report-fold.js';
import { ReportsRepository } from '../../server/src/modules/reports/reports.repository.js';
import { ReportsService } from '../../server/src/modules/reports/reports.service.js';
import { NAIVE_ROWS, NAIVE_SUMS, normalise, type NaiveRow } from './reports-model.compare.js';

/**
 * An existing deployment: its figures folded by the trigger read model the migration
 * Migration20270201000000_report_deltas replaces (summaries up to its watermark, entries in their
 * hold on its deferred list, rows changed since by its triggers, rows created after its last fold).
 * After the migration the reports read exactly what the raw rows say, before the new folder runs
 * and after it.
 */
const LAST_BEFORE = 'Migration20270126000000_branding';
const DAY = 86_400_000;

describe('the migration to per-organization report deltas', () => {
  it('keeps every figure of a deployment folded by the old model', { timeout: 120_000 }, async (ctx) => {
    const serverUrl = process.env.DATABASE_URL;
    // The old model's functions need a real PostgreSQL's sessions: skipped on a laptop without one, never in CI.
    if (!serverUrl && process.env.CI) throw new Error('CI runs this test against a real PostgreSQL: set DATABASE_URL');
    if (!serverUrl) return ctx.skip();
    const name = `aa_test_reports_migration_${process.pid}_${randomBytes(3).toString('hex')}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`create database "${name}"`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const db = new pg.Client({ connectionString: url.toString() });
    let orm: MikroORM | undefined;
    try {
      // No statement_timeout start-up parameter (PgBouncer refuses it), as initOrm migrates.
      const old = await MikroORM.init(
        ormOptions(url.toString(), 2, { ...defaultDatabaseTimeouts, statementMs: 0, queryMs: 0 }),
      );
      await old.migrator.up({ to: LAST_BEFORE });
      await closeOrm(old);
      await db.connect();
      const org = await oldDeployment(db);

      orm = await initOrm(url.toString(), 4);
      const reports = new ReportsService(new ReportsRepository(orm));
      const check = async (label: string) => {
        for (const [from, to] of periods()) {
          const page = await reports.affiliates(org, { from: from.toISOString(), to: to.toISOString(), limit: 100 });
          expect(
            page.affiliates
              .map((r) =>
                normalise({ ...r, commissions: byStatus(r.commissions), key: `${r.affiliate_id} ${r.currency}` }),
              )
              .sort(byKey),
            `${label}: affiliates ${from.toISOString()} ${to.toISOString()}`,
          ).toEqual(await naive(db, org, from, to));
          const series = await reports.timeseries(org, { from: from.toISOString(), to: to.toISOString() });
          const points = series.points
            .map((p) => normalise({ ...p, key: `${p.period.slice(0, 10)} ${p.currency}` }))
            .filter((p) => p.figures.some((f) => f !== 0))
            .sort(byKey);
          expect(points, `${label}: timeseries ${from.toISOString()} ${to.toISOString()}`).toEqual(
            await naive(db, org, from, to, 'day'),
          );
        }
      };
      await check('migrated');
      await foldOrganization(orm, org);
      await check('folded');
    } finally {
      if (orm) await closeOrm(orm, true);
      await db.end().catch(() => undefined);
      await admin.query(`drop database if exists "${name}" with (force)`);
      await admin.end();
    }
  });
});

const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : 1);
const byStatus = (c: Record<(typeof STATUSES)[number], number>) => Object.fromEntries(STATUSES.map((s) => [s, c[s]]));
const STATUSES = ['pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'] as const;

function periods(): [Date, Date][] {
  const now = Date.now();
  const d = new Date(now);
  return [
    [
      new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 4, 1)),
      new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)),
    ],
    [new Date(now - 97.3 * DAY), new Date(now + 3_600_000)],
    [new Date(now - 40.5 * DAY), new Date(now - 3.25 * DAY)],
  ];
}

async function naive(db: pg.Client, org: string, from: Date, to: Date, interval?: string) {
  const key = interval
    ? `to_char(date_trunc('${interval}', x.at at time zone 'UTC'), 'YYYY-MM-DD')`
    : 'x.affiliate_id::text';
  const { rows } = await db.query<NaiveRow>(
    `select ${key} || ' ' || coalesce(x.currency, p.currency::text) as key, ${NAIVE_SUMS}
     from (${NAIVE_ROWS}) x join programs p on p.id = x.program_id and p.organization_id = $1
     where x.at >= $2 and x.at < $3 group by 1 order by 1`,
    [org, from, to],
  );
  return rows.map(normalise);
}

/**
 * One organization's history as the old model holds it: three months of clicks, signups and sales
 * folded (report_fold), a held entry on its deferred list, a refund and an approval after the fold
 * (its triggers), and rows written after the fold (not folded).
 */
async function oldDeployment(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ org: string }>(
    `insert into organizations (id, name) values (gen_random_uuid(), 'Old') returning id as org`,
  );
  const org = rows[0].org;
  await db.query(
    `insert into programs (id, organization_id, name, commission_type, commission_value, click_window_days, currency)
     values (gen_random_uuid(), $1, 'Main', 'percent', 30, 30, 'USD'), (gen_random_uuid(), $1, 'Euro', 'percent', 20, 30, 'EUR')`,
    [org],
  );
  await db.query(
    `insert into affiliates (id, organization_id, program_id, email, slug)
     select gen_random_uuid(), $1, p.id, 'a' || g || '-' || p.currency || '@example.com', 'old-' || g || '-' || lower(p.currency::text)
     from programs p, generate_series(1, 3) g where p.organization_id = $1`,
    [org],
  );
  const history = async (fromDays: number, toDays: number, stamped: 'then' | 'now') => {
    // Written as the service writes: created_at is when the row is stored (a back-dated bulk write
    // the old model never counted without report_reset, so there is none here).
    const at = stamped === 'then' ? 't' : 'now()';
    const span = `now() - make_interval(secs => ($3::float8 + ($2::float8 - $3::float8) * random()) * 86400)`;
    await db.query(
      `insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, occurred_at, created_at)
       select gen_random_uuid(), a.organization_id, a.id, a.program_id, 'c-' || gen_random_uuid(), t, ${at}
       from affiliates a, generate_series(1, 12) g, lateral (select ${span} as t offset 0) x where a.organization_id = $1`,
      [org, fromDays, toDays],
    );
    await db.query(
      `insert into customers (id, organization_id, customer_id, status, affiliate_id, program_id, created_at, updated_at)
       select gen_random_uuid(), a.organization_id, 'cus-' || gen_random_uuid(), 'active', a.id, a.program_id, ${at}, ${at}
       from affiliates a, generate_series(1, 3) g, lateral (select ${span} as t offset 0) x where a.organization_id = $1`,
      [org, fromDays, toDays],
    );
    await db.query(
      `with sales as (
         insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, occurred_at, created_at)
         select gen_random_uuid(), a.organization_id, 'ord-' || gen_random_uuid(), round((10 + random() * 90)::numeric, 2), p.currency, 'initial', 3, a.id, a.program_id, t, ${at}
         from affiliates a join programs p on p.id = a.program_id, generate_series(1, 6) g, lateral (select ${span} as t offset 0) x
         where a.organization_id = $1 returning *)
       insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, approves_at, created_at, updated_at)
       select gen_random_uuid(), organization_id, 'sale', (array['pending', 'pending', 'approved', 'paid', 'rejected'])[1 + floor(random() * 5)::int],
         commission_amount, currency, affiliate_id, program_id, id,
         case when random() < 0.8 then occurred_at + interval '30 days' end, created_at, created_at
       from sales`,
      [org, fromDays, toDays],
    );
  };
  await history(95, 2, 'then');
  // A held entry that approves itself a moment after the fold, and one in its hold for long.
  await db.query(
    `update commissions set approves_at = now() + interval '2 seconds' where id = (
       select id from commissions where organization_id = $1 and status = 'pending' and approves_at is not null order by id limit 1)`,
    [org],
  );
  await db.query(`select report_fold(interval '0 seconds', interval '400 days')`);
  // After the fold: a refund and an approval (the old triggers), and new rows (not folded).
  await db.query(
    `update conversions set refunded_amount = round(amount / 2, 2) where id in (
       select id from conversions where organization_id = $1 order by id limit 3)`,
    [org],
  );
  await db.query(
    `update commissions set status = 'approved', approved_at = now() where id in (
       select id from commissions where organization_id = $1 and status = 'pending' order by id desc limit 2)`,
    [org],
  );
  await history(1, 0, 'now');
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  return org;
}
