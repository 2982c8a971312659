import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actionArb, apply, expectSame, foldNow, world } from './reports-model.support.js';
import { sql } from 'kysely';

/**
 * The reports' read model (summaries folded in the background + a live part) against a straight
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

describe('reports: summaries rebuilt from back-dated rows, folded a week at a time', () => {
  it('equal a straight aggregation at every step, with changes between the steps', { timeout: 120_000 }, async () => {
    const w = await world();
    // Five months of history written at once (as a bulk import would): created_at = occurred_at.
    for (let i = 0; i < 60; i++) {
      const a = w.affiliates[i % 3];
      const daysAgo = 150 - i * 2.5;
      const conversionId = randomUUID();
      await w.db
        .rows(sql`insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, occurred_at, created_at)
         values (${randomUUID()}, ${w.m.id}, ${a.id}, ${a.program_id}, ${randomUUID()}, now() - make_interval(secs => ${daysAgo * 86_400 + 60}), now() - make_interval(secs => ${daysAgo * 86_400 + 60}))`);
      await w.db
        .rows(sql`insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, occurred_at, created_at)
         values (${conversionId}, ${w.m.id}, ${`ord-${conversionId}`}, ${(10 + i).toFixed(2)}, ${a.currency}, 'initial', 3, ${a.id}, ${a.program_id}, now() - make_interval(secs => ${daysAgo * 86_400}), now() - make_interval(secs => ${daysAgo * 86_400}))`);
      const id = randomUUID();
      await w.db
        .rows(sql`insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id, approves_at, created_at, updated_at)
         values (${id}, ${w.m.id}, 'sale', 'pending', 3, ${a.currency}, ${a.id}, ${a.program_id}, ${conversionId}, now() - make_interval(secs => ${daysAgo * 86_400}) + interval '10 days', now() - make_interval(secs => ${daysAgo * 86_400}), now())`);
      w.conversions.push(conversionId);
      w.commissions.push(id);
    }
    await w.db.rows(sql`select report_reset()`);
    let steps = 0;
    for (;;) {
      const before = Date.now();
      const watermark = await w.repo.fold(0, 7 * 86_400);
      steps++;
      if (steps % 4 === 0) await expectSame(w);
      // Something changes between two steps: a refund, an approval, a rejection, a payout.
      await apply(
        w,
        [
          { kind: 'refund', i: steps, full: false } as const,
          { kind: 'approve', i: steps * 7 } as const,
          { kind: 'reject', i: steps * 3 } as const,
          { kind: 'payout' } as const,
        ][steps % 4],
      );
      if (!watermark || new Date(watermark).getTime() >= before - 1_000) break;
    }
    expect(steps).toBeGreaterThan(15);
    await expectSame(w);
  });
});
