import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sql as raw } from 'kysely';
import { compiled } from '../../server/src/modules/reports/report-contributions.js';
import {
  DAY,
  apply,
  counted,
  expectSame,
  foldNow,
  naiveAffiliates,
  naiveSeries,
  reportAffiliates,
  reportSeries,
  world,
} from './reports-model.support.js';

/** Particular cases of the reports' read model against the straight aggregation (reports-model.support.ts). */
describe('reports: entries folded in their hold', () => {
  it(
    'count pending until their approves_at, then approved, before the next fold moves them and after',
    { timeout: 60_000 },
    async () => {
      const w = await world();
      // Keys with revenue (the first ranking try) and one with clicks only (the full ranking).
      await apply(w, { kind: 'sale', a: 0, daysAgo: 0.5, cents: 10_000, otherCurrency: false, approvesInMs: 1_500 });
      await apply(w, { kind: 'sale', a: 1, daysAgo: 2, cents: 5_000, otherCurrency: true, approvesInMs: 30 * DAY });
      await apply(w, { kind: 'sale', a: 1, daysAgo: 3, cents: 7_000, otherCurrency: false, approvesInMs: null });
      await apply(w, { kind: 'click', a: 2, daysAgo: 1 });
      await foldNow(w);
      // Scheduled approvals in the log, not yet folded (those that cancel out, of an entry taken out, are none).
      const listed = async () =>
        (
          await w.db.rows(
            compiled(
              raw<{ n: string }>`select count(*)::text as n from (
                select 1 from report_deltas where organization_id = ${w.m.id} and due_at > '-infinity'
                group by due_at, day, affiliate_id, currency having sum(approved) <> 0) s`,
            ),
          )
        )[0].n;
      expect(await listed()).toBe('2');
      const first = w.commissions[0];
      const amountOf = async () => {
        const res = await w.m.api.get(
          `/api/reports/affiliates?from=${new Date(Date.now() - 7 * DAY).toISOString()}&to=${new Date(Date.now() + DAY).toISOString()}&affiliate_id=${w.affiliates[0].id}`,
        );
        return res.body.data.affiliates[0].commissions as { pending: number; approved: number };
      };
      // Folded, still in its hold: pending.
      expect(
        (
          await w.db.rows(
            raw<{ status: string }>`select status from commissions where organization_id = ${w.m.id} and id = ${first}`,
          )
        )[0].status,
      ).toBe('pending');
      expect(await amountOf()).toMatchObject({ pending: 30, approved: 0 });
      await expectSame(w);
      // Its hold ended, no fold since: still in the log, read approved.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, w.soonUntil + 100 - Date.now())));
      expect(await listed()).toBe('2');
      expect(await amountOf()).toMatchObject({ pending: 0, approved: 30 });
      await expectSame(w);
      // The next fold moves it from pending to approved in the summaries: the same figures.
      await foldNow(w);
      expect(await listed()).toBe('1');
      expect(await amountOf()).toMatchObject({ pending: 0, approved: 30 });
      await expectSame(w);
      // Rejected while held (the other entry): its approval cancelled, out of pending.
      await w.m.api.post(`/api/commissions/${w.commissions[1]}/reject`, {});
      expect(await listed()).toBe('0');
      await expectSame(w);
    },
  );
});

describe('reports: a period whose ends round outward to midnight', () => {
  it('subtracts the rows between an end and its midnight, folded or not', { timeout: 60_000 }, async () => {
    const w = await world();
    const midnight = (daysAgo: number) => {
      const d = new Date(Date.now() - daysAgo * DAY);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    };
    // from = 6 h past a midnight (rounds down: [midnight, from) subtracted), to = 18 h past one (rounds up: [to, next midnight) subtracted).
    const from = new Date(midnight(10) + 6 * 3_600_000);
    const to = new Date(midnight(3) + 18 * 3_600_000);
    const daysAgoOf = (t: number) => (Date.now() - t) / DAY;
    const times = [
      midnight(10) + 2 * 3_600_000,
      midnight(10) + 8 * 3_600_000,
      midnight(3) + 10 * 3_600_000,
      midnight(3) + 20 * 3_600_000,
    ];
    for (const [i, t] of times.entries()) {
      await apply(w, {
        kind: 'sale',
        a: i % 3,
        daysAgo: daysAgoOf(t),
        cents: 1_000 * (i + 1),
        otherCurrency: false,
        approvesInMs: i === 1 ? 30 * DAY : null,
      });
      await apply(w, { kind: 'click', a: (i + 1) % 3, daysAgo: daysAgoOf(t) });
    }
    // Back-dated (created_at days ago), counted as an import counts its rows.
    const adjustment = randomUUID();
    await w.db.transaction(async (db) => {
      await db.rows(raw`insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, description, created_at, updated_at)
        values (${adjustment}, ${w.m.id}, 'adjustment', 'approved', 4, 'USD', ${w.affiliates[0].id}, ${w.affiliates[0].program_id}, 'bonus', ${new Date(times[3])}, now())`);
      await counted(db, w.m.id, { commissions: [adjustment] }, 1);
    });
    const check = async () => {
      expect(await reportAffiliates(w, from, to)).toEqual(await naiveAffiliates(w, from, to));
      for (const interval of ['day', 'week', 'month'])
        expect(await reportSeries(w, from, to, interval), interval).toEqual(await naiveSeries(w, from, to, interval));
    };
    await check();
    await foldNow(w);
    await check();
    // The rows outside the period are there to be subtracted: the raw aggregation of the whole days differs.
    expect(await naiveAffiliates(w, new Date(midnight(10)), new Date(midnight(2)))).not.toEqual(
      await naiveAffiliates(w, from, to),
    );
  });
});
