import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { expect } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { ReportsRepository } from '../../server/src/modules/reports/reports.repository.js';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';
import { sql } from 'kysely';

/**
 * What the reports' model tests share (reports-model.test.ts, reports-model-cases.test.ts): a
 * world of three affiliates in two programs, the ledger events as SQL or API calls, and the
 * comparison of the reports with a straight aggregation of the raw tables.
 *
 * Rows are written with SQL where the API cannot yet write them (sale entries come with the
 * conversions' ledger work), with created_at = the database's clock, as the service stamps them.
 */

export type Merchant = Awaited<ReturnType<typeof createMerchant>>;
export const DAY = 86_400_000;

export interface World {
  m: Merchant;
  db: Db;
  repo: ReportsRepository;
  affiliates: { id: string; program_id: string; currency: string; hold: number | null }[];
  conversions: string[];
  commissions: string[];
  /** When the last entry approving itself within the run does (Date.now() scale). */
  soonUntil: number;
}

export async function world(): Promise<World> {
  const { db } = await testServer();
  const m = await createMerchant({ currency: 'USD', hold_days: 10 });
  const p2 = (
    await m.api.post('/api/programs', {
      name: 'Euro',
      commission_value: 20,
      currency: 'EUR',
      hold_days: 0,
      auto_approve: false,
    })
  ).body.data.program;
  const b = (await m.api.post('/api/affiliates', { email: `b-${randomUUID()}@example.com`, program_id: m.program.id }))
    .body.data.affiliate;
  const c = (await m.api.post('/api/affiliates', { email: `c-${randomUUID()}@example.com`, program_id: p2.id })).body
    .data.affiliate;
  return {
    m,
    db: Db.of(db.orm),
    repo: new ReportsRepository(db.orm),
    affiliates: [
      { id: m.affiliate.id, program_id: m.program.id, currency: 'USD', hold: 10 },
      { id: b.id, program_id: m.program.id, currency: 'USD', hold: 10 },
      { id: c.id, program_id: p2.id, currency: 'EUR', hold: null },
    ],
    conversions: [],
    commissions: [],
    soonUntil: 0,
  };
}

export type Action =
  | { kind: 'click'; a: number; daysAgo: number }
  | { kind: 'customer'; a: number }
  | { kind: 'sale'; a: number; daysAgo: number; cents: number; otherCurrency: boolean; approvesInMs: number | null }
  | { kind: 'refund'; i: number; full: boolean }
  | { kind: 'approve' | 'reject' | 'hold'; i: number }
  | { kind: 'adjust'; a: number; cents: number }
  | { kind: 'payout' }
  | { kind: 'pay' | 'cancel' }
  | { kind: 'wait'; ms: number }
  | { kind: 'fold' };

export const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('fold' as const) }), weight: 3 },
  fc.record({
    kind: fc.constant('click' as const),
    a: fc.nat(2),
    daysAgo: fc.double({ min: 0, max: 120, noNaN: true }),
  }),
  fc.record({ kind: fc.constant('customer' as const), a: fc.nat(2) }),
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('sale' as const),
      a: fc.nat(2),
      daysAgo: fc.double({ min: 0, max: 120, noNaN: true }),
      cents: fc.integer({ min: 1, max: 100_000 }),
      otherCurrency: fc.boolean(),
      // approves_at relative to now: passed, a moment ahead (time passes within the run), far ahead, or null.
      approvesInMs: fc.oneof(
        fc.constant(null),
        fc.integer({ min: -5 * DAY, max: -1 }),
        fc.integer({ min: 200, max: 1_500 }),
        fc.constant(30 * DAY),
      ),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('refund' as const), i: fc.nat(), full: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom('approve' as const, 'reject' as const, 'hold' as const),
      i: fc.nat(),
    }),
  },
  fc.record({
    kind: fc.constant('adjust' as const),
    a: fc.nat(2),
    cents: fc.integer({ min: -5_000, max: 5_000 }).filter((c) => c !== 0),
  }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('payout' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('pay' as const, 'cancel' as const) }) },
  fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 50, max: 800 }) }),
);

export const money = (cents: number) => (cents / 100).toFixed(2);

export async function apply(w: World, action: Action): Promise<void> {
  const org = w.m.id;
  switch (action.kind) {
    case 'click': {
      const a = w.affiliates[action.a];
      await w.db.rows(
        sql`insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, occurred_at, created_at) values (${randomUUID()}, ${org}, ${a.id}, ${a.program_id}, ${randomUUID()}, now() - make_interval(secs => ${action.daysAgo * 86_400}), clock_timestamp())`,
      );
      return;
    }
    case 'customer': {
      const a = w.affiliates[action.a];
      await w.db.rows(
        sql`insert into customers (id, organization_id, customer_id, status, affiliate_id, program_id, created_at, updated_at) values (${randomUUID()}, ${org}, ${`cus-${randomUUID()}`}, 'trial', ${a.id}, ${a.program_id}, clock_timestamp(), clock_timestamp())`,
      );
      return;
    }
    case 'sale': {
      const a = w.affiliates[action.a];
      const currency = action.otherCurrency ? 'GBP' : a.currency;
      const conversionId = randomUUID();
      const commissionCents = Math.max(1, Math.round(action.cents * 0.3));
      await w.db.transaction(async (db) => {
        await db.rows(sql`insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, occurred_at, created_at)
           values (${conversionId}, ${org}, ${`ord-${conversionId}`}, ${money(action.cents)}, ${currency}, 'initial', ${money(commissionCents)}, ${a.id}, ${a.program_id}, now() - make_interval(secs => ${action.daysAgo * 86_400}), clock_timestamp())`);
        const id = randomUUID();
        await db.rows(sql`insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, approves_at, created_at, updated_at)
           values (${id}, ${org}, 'sale', 'pending', ${money(commissionCents)}, ${currency}, ${a.id}, ${a.program_id}, ${conversionId}, case when ${action.approvesInMs}::bigint is null then null else clock_timestamp() + make_interval(secs => ${action.approvesInMs}::bigint / 1000.0) end, clock_timestamp(), clock_timestamp())`);
        w.commissions.push(id);
      });
      if (action.approvesInMs !== null && action.approvesInMs > 0 && action.approvesInMs < DAY)
        w.soonUntil = Math.max(w.soonUntil, Date.now() + action.approvesInMs);
      w.conversions.push(conversionId);
      return;
    }
    case 'refund': {
      if (w.conversions.length === 0) return;
      const conversionId = w.conversions[action.i % w.conversions.length];
      // What the ledger's refund rule does (commission-lifecycle.ts refundEffect), in SQL.
      await w.db.transaction(async (db) => {
        const [c] = await db.rows(
          sql<{
            amount: string;
            refunded_amount: string;
          }>`select amount, refunded_amount from conversions where id = ${conversionId} for update`,
        );
        const [sale] = await db.rows(sql<{
          id: string;
          status: string;
          amount: string;
          payout_id: string | null;
          affiliate_id: string;
          program_id: string;
          currency: string;
        }>`select k.id, k.status, k.amount, i.payout_id, k.affiliate_id, k.program_id, k.currency
             from commissions k left join payout_items i on i.organization_id = k.organization_id and i.commission_id = k.id
            where k.conversion_id = ${conversionId} and k.type = 'sale' for update of k`);
        if (!c || !sale || c.refunded_amount === c.amount) return;
        const refunded = action.full ? c.amount : (Math.round(Number(c.amount) * 50) / 100).toFixed(2);
        if (Number(refunded) <= Number(c.refunded_amount)) return;
        await db.rows(
          sql`update conversions set refunded_amount = ${refunded}, status = case when ${refunded}::numeric >= amount then 'reversed' else status end where id = ${conversionId}`,
        );
        if (sale.status === 'rejected' || sale.status === 'reversed') return;
        const keep = action.full ? 0 : Math.round(Number(sale.amount) * 50) / 100;
        if (sale.payout_id !== null || sale.status === 'paid') {
          const claw = keep - Number(sale.amount);
          if (claw < 0)
            await db.rows(sql`insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, approved_at, created_at, updated_at)
               values (${randomUUID()}, ${org}, 'clawback', 'approved', ${claw.toFixed(2)}, ${sale.currency}, ${sale.affiliate_id}, ${sale.program_id}, ${conversionId}, now(), clock_timestamp(), clock_timestamp())`);
        } else if (action.full || keep <= 0) {
          await db.rows(sql`update commissions set status = 'reversed', updated_at = now() where id = ${sale.id}`);
        } else {
          await db.rows(
            sql`update commissions set amount = ${keep.toFixed(2)}, updated_at = now() where id = ${sale.id}`,
          );
        }
      });
      return;
    }
    case 'approve':
    case 'reject':
    case 'hold': {
      if (w.commissions.length === 0) return;
      const id = w.commissions[action.i % w.commissions.length];
      if (action.kind === 'hold') {
        await w.db.rows(
          sql`update commissions set status = 'on_hold', updated_at = now() where id = ${id} and status = 'pending'`,
        );
        return;
      }
      // The real routes: their rules and their statements.
      await w.m.api.post(`/api/commissions/${id}/${action.kind}`, {});
      return;
    }
    case 'adjust': {
      const a = w.affiliates[action.a];
      const res = await w.m.api.post('/api/commissions', {
        affiliate_id: a.id,
        amount: action.cents / 100,
        description: 'bonus',
      });
      expect(res.status).toBe(201);
      w.commissions.push(res.body.data.commission.id);
      return;
    }
    case 'payout':
      expect((await w.m.api.post('/api/payouts', {})).status).toBe(201);
      return;
    case 'pay':
    case 'cancel': {
      const pending = (await w.m.api.get('/api/payouts?status=pending')).body.data.payouts as { id: string }[];
      if (pending.length > 0)
        await w.m.api.post(`/api/payouts/${pending[0].id}/${action.kind === 'pay' ? 'paid' : 'cancel'}`, {});
      return;
    }
    case 'wait':
      await new Promise((resolve) => setTimeout(resolve, action.ms));
      return;
    case 'fold':
      await foldNow(w);
      return;
  }
}

export const naiveRows = (organizationId: string) => sql`
  select affiliate_id, program_id, null::text as currency, occurred_at as at, 1 as clicks, 0 as customers, 0 as conversions, 0::numeric as revenue, 0::numeric as refunded, null::text as status, 0::numeric as amount
  from clicks where organization_id = ${organizationId}
  union all
  select affiliate_id, program_id, null, created_at, 0, 1, 0, 0, 0, null, 0 from customers where organization_id = ${organizationId}
  union all
  select affiliate_id, program_id, currency::text, occurred_at, 0, 0, 1, amount, refunded_amount, null, 0 from conversions where organization_id = ${organizationId}
  union all
  select k.affiliate_id, k.program_id, k.currency::text, coalesce(v.occurred_at, k.created_at), 0, 0, 0, 0, 0,
    case when k.status = 'pending' and k.approves_at <= now() then 'approved' else k.status end, k.amount
  from commissions k left join conversions v on v.id = k.conversion_id where k.organization_id = ${organizationId}`;

export const NAIVE_SUMS = `sum(clicks)::int as clicks, sum(customers)::int as customers, sum(conversions)::int as conversions, sum(revenue)::text as revenue, sum(refunded)::text as refunded,
  ${['pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'].map((s) => `coalesce(sum(amount) filter (where status = '${s}'), 0)::text as ${s}`).join(', ')}`;

export interface NaiveRow {
  key: string;
  clicks: number;
  customers: number;
  conversions: number;
  revenue: string;
  refunded: string;
  pending: string;
  approved: string;
  paid: string;
  reversed: string;
  rejected: string;
  on_hold: string;
}

export function normalise(
  row:
    | NaiveRow
    | {
        key: string;
        clicks: number;
        customers: number;
        conversions: number;
        revenue: number;
        refunded: number;
        commissions: Record<string, number>;
      },
) {
  const c = 'commissions' in row ? row.commissions : row;
  return {
    key: row.key,
    figures: [
      row.clicks,
      row.customers,
      row.conversions,
      Number(row.revenue),
      Number(row.refunded),
      ...['pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'].map((s) =>
        Number((c as Record<string, unknown>)[s]),
      ),
    ],
  };
}

export async function naiveAffiliates(w: World, from: Date, to: Date) {
  const rows = await w.db.rows(
    sql<NaiveRow>`select x.affiliate_id || ' ' || coalesce(x.currency, p.currency::text) as key, ${sql.raw(NAIVE_SUMS)}
     from (${naiveRows(w.m.id)}) x join programs p on p.id = x.program_id
     where x.at >= ${from} and x.at < ${to} group by 1 order by 1`,
  );
  return rows.map(normalise);
}

export async function naiveSeries(w: World, from: Date, to: Date, interval: string) {
  const rows = await w.db.rows(
    sql<NaiveRow>`select to_char(date_trunc(${interval}, x.at at time zone 'UTC'), 'YYYY-MM-DD') || ' ' || coalesce(x.currency, p.currency::text) as key, ${sql.raw(NAIVE_SUMS)}
     from (${naiveRows(w.m.id)}) x join programs p on p.id = x.program_id
     where x.at >= ${from} and x.at < ${to} group by 1 order by 1`,
  );
  return rows.map(normalise);
}

export async function reportAffiliates(w: World, from: Date, to: Date, affiliateIds?: string[]) {
  const rows: {
    affiliate_id: string;
    currency: string;
    clicks: number;
    customers: number;
    conversions: number;
    revenue: number;
    refunded: number;
    commissions: Record<string, number>;
  }[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: any } = await w.m.api.get(
      `/api/reports/affiliates?from=${from.toISOString()}&to=${to.toISOString()}&limit=2${cursor ? `&cursor=${cursor}` : ''}${affiliateIds ? `&affiliate_id=${affiliateIds.join(',')}` : ''}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    rows.push(...res.body.data.affiliates);
    cursor = res.body.data.next_cursor;
  } while (cursor);
  // Sorted by revenue, highest first.
  for (let i = 1; i < rows.length; i++) expect(rows[i - 1].revenue).toBeGreaterThanOrEqual(rows[i].revenue);
  return rows
    .map((r) => normalise({ ...r, key: `${r.affiliate_id} ${r.currency}` }))
    .sort((a, b) => (a.key < b.key ? -1 : 1));
}

export async function reportSeries(w: World, from: Date, to: Date, interval: string) {
  const res = await w.m.api.get(
    `/api/reports/timeseries?from=${from.toISOString()}&to=${to.toISOString()}&interval=${interval}`,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const points = res.body.data.points as {
    period: string;
    currency: string;
    clicks: number;
    customers: number;
    conversions: number;
    revenue: number;
    refunded: number;
    commissions: Record<string, number>;
  }[];
  return points
    .map((p) => normalise({ ...p, key: `${p.period.slice(0, 10)} ${p.currency}` }))
    .filter((p) => p.figures.some((f) => f !== 0))
    .sort((a, b) => (a.key < b.key ? -1 : 1));
}

export function windows(): [Date, Date][] {
  const now = Date.now();
  const d = new Date(now);
  const monthAligned: [Date, Date] = [
    new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 4, 1)),
    new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)),
  ];
  const ragged: [Date, Date] = [new Date(now - 47.3 * DAY), new Date(now + 3_600_000)];
  const inside: [Date, Date] = [new Date(now - 20.5 * DAY), new Date(now - 3.25 * DAY)];
  return [monthAligned, ragged, inside];
}

export async function expectSame(w: World): Promise<void> {
  // The narrow copy of the running revenue (report_affiliate_revenue) mirrors the totals' rows with a currency.
  const [drift] = await w.db.rows(sql<{
    n: number;
  }>`select count(*)::int as n from (select * from report_affiliate_totals where organization_id = ${w.m.id} and currency <> '') t
     full join (select * from report_affiliate_revenue where organization_id = ${w.m.id}) r
       on r.before = t.before and r.affiliate_id = t.affiliate_id and r.currency = t.currency
     where r.revenue is distinct from t.revenue or r.program_id is distinct from t.program_id`);
  expect(drift.n, 'report_affiliate_revenue out of step').toBe(0);
  // The report and the straight aggregation are two statements: no entry may approve itself between them.
  const wait = w.soonUntil + 100 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  for (const [from, to] of windows()) {
    expect(await reportAffiliates(w, from, to), `affiliates ${from.toISOString()} ${to.toISOString()}`).toEqual(
      await naiveAffiliates(w, from, to),
    );
  }
  const [from, to] = windows()[1];
  // Narrowed to some affiliates (the dashboard's affiliates list): their rows of the whole report.
  const some = w.affiliates.slice(0, 2).map((a) => a.id);
  const naiveSome = (await naiveAffiliates(w, from, to)).filter((r) => some.some((id) => r.key.startsWith(id)));
  expect(await reportAffiliates(w, from, to, some), 'affiliates narrowed').toEqual(naiveSome);
  for (const interval of ['day', 'week', 'month']) {
    expect(await reportSeries(w, from, to, interval), `timeseries ${interval}`).toEqual(
      await naiveSeries(w, from, to, interval),
    );
  }
}

/**
 * Folds everything written so far (no lag). The service's own background folder may hold the fold
 * at that moment (the repository then answers undefined and folds nothing): asked again until a
 * fold of ours has reached the time it was asked at.
 */
export async function foldNow(w: World): Promise<void> {
  const until = Date.now();
  for (let i = 0; i < 200; i++) {
    const watermark = await w.repo.fold(0, 400 * 86_400);
    if (watermark && new Date(watermark).getTime() >= until) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the fold did not catch up');
}
