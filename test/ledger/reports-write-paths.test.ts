import { randomUUID } from 'node:crypto';
import { sql as raw } from 'kysely';
import { describe, expect, it } from 'vitest';
import { compiled } from '../../server/src/modules/reports/report-contributions.js';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';
import { Db } from '../../server/src/db/sql.js';
import { ReportsRepository } from '../../server/src/modules/reports/reports.repository.js';
import { DAY, apply, expectSame, foldNow, world, type World } from './reports-model.support.js';

/**
 * Every write path the API offers keeps the reports equal to a straight aggregation of the raw
 * tables (reports-model.support.ts expectSame), before the background fold and after it: the hot
 * lane's batched clicks, signups and sales (by click and by customer), refunds (a reduced entry, a
 * reversed one, a clawback of a paid one), approvals, rejections, adjustments, payouts paid and
 * canceled, and a test-data reset. Each writes what its rows count in the reports itself
 * (modules/reports/report-contributions.ts): a path that forgot would leave the reports off.
 */

const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

async function commissionIds(w: World): Promise<string[]> {
  const res = await w.m.api.get('/api/commissions?limit=100');
  expect(res.status).toBe(200);
  return (res.body.data.commissions as { id: string }[]).map((c) => c.id);
}

async function sales(w: World, slugs: string[], tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, slug] of slugs.entries()) {
    for (let k = 0; k < 2; k++) expect((await w.m.api.post('/api/clicks', { ref: slug })).status).toBe(201);
    const customer = `cus-${tag}-${i}-${randomUUID()}`;
    expect((await w.m.api.post('/api/customers', { customer_id: customer, ref: slug })).status).toBe(201);
    // By customer (the guarded write), days back; then by click, a month back.
    for (const [external, body] of [
      [`ord-${tag}-${i}-a`, { customer_id: customer, amount: 40 + i, occurred_at: ago(3 + i) }],
      [`ord-${tag}-${i}-b`, { ref: slug, amount: 25.5, occurred_at: ago(33) }],
    ] as const) {
      const res = await w.m.api.post('/api/conversions', { external_id: external, ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids.push(res.body.data.conversion.id);
    }
  }
  return ids;
}

describe('reports: every write path of the API keeps them equal to a recomputation', () => {
  it('sales, refunds, approvals, rejections, adjustments, payouts', { timeout: 120_000 }, async () => {
    const w = await world();
    const slugs: string[] = [];
    for (const a of w.affiliates) slugs.push((await w.m.api.get(`/api/affiliates/${a.id}`)).body.data.affiliate.slug);
    const conversions = await sales(w, slugs, 'one');
    w.conversions.push(...conversions);
    w.commissions.push(...(await commissionIds(w)));
    await expectSame(w);
    await foldNow(w);
    await expectSame(w);

    const refund = async (id: string, amount?: number) => {
      const res = await w.m.api.post(`/api/conversions/${id}/refund`, amount === undefined ? {} : { amount });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    await refund(conversions[0], 10); // the entry reduced
    await refund(conversions[1]); // reversed
    for (const i of [2, 3]) await apply(w, { kind: 'approve', i: w.commissions.indexOf(w.commissions[i]) });
    await apply(w, { kind: 'reject', i: 4 });
    await apply(w, { kind: 'adjust', a: 0, cents: 1_234 });
    await apply(w, { kind: 'adjust', a: 2, cents: -567 });
    await expectSame(w);

    await apply(w, { kind: 'payout' });
    await apply(w, { kind: 'pay' });
    await expectSame(w);
    // Refunded once paid: a clawback entry.
    for (const id of conversions.slice(2)) await refund(id);
    await apply(w, { kind: 'payout' });
    await apply(w, { kind: 'cancel' });
    await expectSame(w);
    await foldNow(w);
    await expectSame(w);
  });

  it('a test-data reset empties the test organization’s reports, which count again from zero', async () => {
    const m = await createMerchant();
    const { db } = await testServer();
    const sql = Db.of(db.orm);
    const [twin] = await sql.rows(
      compiled(raw<{ id: string }>`select id from organizations where live_organization_id = ${m.id}`),
    );
    const testWorld = async (): Promise<World> => {
      const program = await m.testApi.post('/api/programs', { name: 'Main (test)', commission_value: 30 });
      expect(program.status).toBe(201);
      const affiliate = await m.testApi.post('/api/affiliates', {
        email: m.affiliate.email,
        program_id: program.body.data.program.id,
        slug: m.slug,
      });
      expect(affiliate.status, JSON.stringify(affiliate.body)).toBe(201);
      return {
        m: { ...m, id: twin.id, api: m.testApi },
        db: sql,
        repo: new ReportsRepository(db.orm),
        affiliates: [
          {
            id: affiliate.body.data.affiliate.id,
            program_id: program.body.data.program.id,
            currency: 'USD',
            hold: null,
          },
        ],
        conversions: [],
        commissions: [],
        soonUntil: 0,
      };
    };
    const before = await testWorld();
    before.conversions.push(...(await sales(before, [m.slug], 'test')));
    await foldNow(before);
    await sales(before, [m.slug], 'more');
    const reset = await m.testApi.delete('/api/test-data');
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    const [left] = await sql.rows(
      compiled(
        raw<{ n: number }>`select (select count(*) from report_deltas where organization_id = ${twin.id})
          + (select count(*) from report_affiliate_days where organization_id = ${twin.id})
          + (select count(*) from report_affiliate_totals where organization_id = ${twin.id})
          + (select count(*) from report_program_days where organization_id = ${twin.id})::int as n`,
      ),
    );
    expect(Number(left.n), 'report rows of the test organization after its reset').toBe(0);
    // The same slug again, the same external ids: counted once, from zero.
    const after = await testWorld();
    await sales(after, [m.slug], 'test');
    await expectSame(after);
    await foldNow(after);
    await expectSame(after);
  });
});
