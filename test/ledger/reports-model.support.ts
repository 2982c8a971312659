import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql as raw } from 'kysely';
import { expect } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { ReportsRepository } from '../../server/src/modules/reports/reports.repository.js';
import { compiled, countRows, type CountedRows } from '../../server/src/modules/reports/report-contributions.js';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';

/**
 * What the reports' model tests share (reports-model.test.ts, reports-model-cases.test.ts): a
 * world of three affiliates in two programs, the ledger events as SQL or API calls, and the
 * comparison of the reports with a straight aggregation of the raw tables.
 *
 * Rows are written with SQL where the API cannot write them as the test needs (a click or a sale
 * days back, a hold), with created_at = the database's clock, as the service stamps them; each such
 * write counts its rows in the reports as every writer does (counted: report-contributions.ts,
 * after an insert, around an update).
 */

/** What `rows` count in the reports, added (1) or taken out (-1), in the transaction `sql`. */
export async function counted(db: Db, organizationId: string, rows: CountedRows, sign: 1 | -1): Promise<void> {
  await db.rows(compiled(countRows(organizationId, rows, sign)!));
}

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
      const id = randomUUID();
      await w.db.transaction(async (db) => {
        await db.rows(
          raw`insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, occurred_at, created_at) values (${id}, ${org}, ${a.id}, ${a.program_id}, ${randomUUID()}, now() - make_interval(secs => ${action.daysAgo * 86_400}), clock_timestamp())`,
        );
        await counted(db, org, { clicks: [id] }, 1);
      });
      return;
    }
    case 'customer': {
      const a = w.affiliates[action.a];
      const id = randomUUID();
      await w.db.transaction(async (db) => {
        await db.rows(
          raw`insert into customers (id, organization_id, customer_id, status, affiliate_id, program_id, created_at, updated_at) values (${id}, ${org}, ${`cus-${randomUUID()}`}, 'trial', ${a.id}, ${a.program_id}, clock_timestamp(), clock_timestamp())`,
        );
        await counted(db, org, { customers: [id] }, 1);
      });
      return;
    }
    case 'sale': {
      const a = w.affiliates[action.a];
      const currency = action.otherCurrency ? 'GBP' : a.currency;
      const conversionId = randomUUID();
      const commissionCents = Math.max(1, Math.round(action.cents * 0.3));
      await w.db.transaction(async (db) => {
        await db.rows(raw`insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, occurred_at, created_at)
           values (${conversionId}, ${org}, ${`ord-${conversionId}`}, ${money(action.cents)}, ${currency}, 'initial', ${money(commissionCents)}, ${a.id}, ${a.program_id}, now() - make_interval(secs => ${action.daysAgo * 86_400}), clock_timestamp())`);
        const id = randomUUID();
        await db.rows(raw`insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, approves_at, created_at, updated_at)
           values (${id}, ${org}, 'sale', 'pending', ${money(commissionCents)}, ${currency}, ${a.id}, ${a.program_id}, ${conversionId}, case when ${action.approvesInMs}::bigint is null then null else clock_timestamp() + make_interval(secs => ${action.approvesInMs}::bigint / 1000.0) end, clock_timestamp(), clock_timestamp())`);
        await counted(db, org, { conversions: [conversionId], commissions: [id] }, 1);
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
          raw<{
            amount: string;
            refunded_amount: string;
          }>`select amount, refunded_amount from conversions where organization_id = ${org} and id = ${conversionId} for update`,
        );
        const [sale] = await db.rows(raw<{
          id: string;
          status: string;
          amount: string;
          payout_id: string | null;
          affiliate_id: string;
          program_id: string;
          currency: string;
        }>`select k.id, k.status, k.amount, i.payout_id, k.affiliate_id, k.program_id, k.currency
             from commissions k left join payout_items i on i.organization_id = k.organization_id and i.commission_id = k.id
            where k.organization_id = ${org} and k.conversion_id = ${conversionId} and k.type = 'sale' for update of k`);
        if (!c || !sale || c.refunded_amount === c.amount) return;
        const refunded = action.full ? c.amount : (Math.round(Number(c.amount) * 50) / 100).toFixed(2);
        if (Number(refunded) <= Number(c.refunded_amount)) return;
        await counted(db, org, { conversions: [conversionId] }, -1);
        await db.rows(
          raw`update conversions set refunded_amount = ${refunded}, status = case when ${refunded}::numeric >= amount then 'reversed' else status end where organization_id = ${org} and id = ${conversionId}`,
        );
        await counted(db, org, { conversions: [conversionId] }, 1);
        if (sale.status === 'rejected' || sale.status === 'reversed') return;
        const keep = action.full ? 0 : Math.round(Number(sale.amount) * 50) / 100;
        if (sale.payout_id !== null || sale.status === 'paid') {
          const claw = keep - Number(sale.amount);
          if (claw < 0) {
            const clawbackId = randomUUID();
            await db.rows(raw`insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, approved_at, created_at, updated_at)
               values (${clawbackId}, ${org}, 'clawback', 'approved', ${claw.toFixed(2)}, ${sale.currency}, ${sale.affiliate_id}, ${sale.program_id}, ${conversionId}, now(), clock_timestamp(), clock_timestamp())`);
            await counted(db, org, { commissions: [clawbackId] }, 1);
          }
        } else if (action.full || keep <= 0) {
          await counted(db, org, { commissions: [sale.id] }, -1);
          await db.rows(
            raw`update commissions set status = 'reversed', updated_at = now() where organization_id = ${org} and id = ${sale.id}`,
          );
          await counted(db, org, { commissions: [sale.id] }, 1);
        } else {
          await counted(db, org, { commissions: [sale.id] }, -1);
          await db.rows(
            raw`update commissions set amount = ${keep.toFixed(2)}, updated_at = now() where organization_id = ${org} and id = ${sale.id}`,
          );
          await counted(db, org, { commissions: [sale.id] }, 1);
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
        await w.db.transaction(async (db) => {
          await counted(db, org, { commissions: [id] }, -1);
          await db.rows(
            raw`update commissions set status = 'on_hold', updated_at = now() where organization_id = ${org} and id = ${id} and status = 'pending'`,
          );
          await counted(db, org, { commissions: [id] }, 1);
        });
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

export * from './reports-model.compare.js';

/**
 * Folds the organization's due deltas, then checks that none is left due: the service's own
 * background folder may be folding the organization at that moment (the fold waits for it).
 */
export async function foldNow(w: World): Promise<void> {
  await w.repo.fold(w.m.id);
  const [left] = await w.db.rows(
    compiled(
      raw<{ n: number }>`select count(*)::int as n from report_deltas
        where organization_id = ${w.m.id} and due_at <= now() - interval '1 second'`,
    ),
  );
  expect(left.n, 'deltas left due after a fold').toBe(0);
}
