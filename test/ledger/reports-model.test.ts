import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { actionArb, apply, counted, expectSame, foldNow, world } from './reports-model.support.js';
import { sql } from 'kysely';

/**
 * The reports' read model (summaries folded in the background + the deltas not folded yet) against a straight
 * aggregation of the raw tables, after random sequences of sales, clicks, signups, refunds,
 * approvals, rejections, holds, adjustments, payouts (created, paid, canceled), time passing and
 * folds: identical, for periods aligned to the summaries and not, and for every interval.
 * Helpers: reports-model.support.ts; particular cases: reports-model-cases.test.ts.
 */
describe('reports: summaries + live part = a straight aggregation of the raw tables', () => {
  it('after random sequences of ledger events, time passing and folds', { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(actionArb, { minLength: 5, maxLength: 30 }), async (actions) => {
        const w = await world();
        for (const action of actions) await apply(w, action);
        await expectSame(w);
        await foldNow(w);
        await expectSame(w);
      }),
      { numRuns: 30 },
    );
  });
});

describe('reports: back-dated rows counted as an import counts them, folded between changes', () => {
  it('equal a straight aggregation at every step, with changes between the steps', { timeout: 120_000 }, async () => {
    const w = await world();
    // Five months of history written in pages (as a bulk import writes them): created_at = occurred_at.
    for (let i = 0; i < 60; i++) {
      const a = w.affiliates[i % 3];
      const daysAgo = 150 - i * 2.5;
      const clickId = randomUUID();
      const conversionId = randomUUID();
      const id = randomUUID();
      await w.db.transaction(async (db) => {
        await db.rows(sql`insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, occurred_at, created_at)
           values (${clickId}, ${w.m.id}, ${a.id}, ${a.program_id}, ${randomUUID()}, now() - make_interval(secs => ${daysAgo * 86_400 + 60}), now() - make_interval(secs => ${daysAgo * 86_400 + 60}))`);
        await db.rows(sql`insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, occurred_at, created_at)
           values (${conversionId}, ${w.m.id}, ${`ord-${conversionId}`}, ${(10 + i).toFixed(2)}, ${a.currency}, 'initial', 3, ${a.id}, ${a.program_id}, now() - make_interval(secs => ${daysAgo * 86_400}), now() - make_interval(secs => ${daysAgo * 86_400}))`);
        await db.rows(sql`insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, approves_at, created_at, updated_at)
           values (${id}, ${w.m.id}, 'sale', 'pending', 3, ${a.currency}, ${a.id}, ${a.program_id}, ${conversionId}, now() - make_interval(secs => ${daysAgo * 86_400}) + interval '10 days', now() - make_interval(secs => ${daysAgo * 86_400}), now())`);
        await counted(db, w.m.id, { clicks: [clickId], conversions: [conversionId], commissions: [id] }, 1);
      });
      w.conversions.push(conversionId);
      w.commissions.push(id);
      if (i % 4 !== 3) continue;
      const step = (i + 1) / 4;
      if (step % 2 === 0) await foldNow(w);
      // Something changes between two steps: a refund, an approval, a rejection, a payout.
      await apply(
        w,
        [
          { kind: 'refund', i: step, full: false } as const,
          { kind: 'approve', i: step * 7 } as const,
          { kind: 'reject', i: step * 3 } as const,
          { kind: 'payout' } as const,
        ][step % 4],
      );
      if (step % 3 === 0) await expectSame(w);
    }
    await expectSame(w);
    await foldNow(w);
    await expectSame(w);
  });
});
