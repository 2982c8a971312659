import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMerchant } from '../support/api.js';

/**
 * The ledger's books balance whatever happens, in any order: sales, partial and full refunds
 * before and after payment, adjustments both ways, rejections, payouts created, paid and
 * canceled. Checked against the real service and PostgreSQL after every sequence:
 * - each conversion's live entries (sale + clawbacks, not reversed or rejected) net exactly its
 *   commission after refunds;
 * - the affiliate's live entries = what paid payouts paid + what is still owed (live entries in
 *   no paid payout), and every payout's amount is exactly the sum of the entries it carries;
 * - no payout is zero or negative, and a canceled one carries nothing.
 */

type Op =
  | { op: 'sale'; amount: number; currency: 'USD' | 'EUR' }
  | { op: 'refund'; which: number; part: number | 'all' }
  | { op: 'adjust'; cents: number }
  | { op: 'reject'; which: number }
  | { op: 'payouts' }
  | { op: 'paid'; which: number }
  | { op: 'cancel'; which: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('sale' as const),
      amount: fc.integer({ min: 1, max: 50_000 }).map((c) => c / 100),
      currency: fc.constantFrom('USD' as const, 'EUR' as const),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('refund' as const),
      which: fc.nat(),
      part: fc.oneof(fc.constant('all' as const), fc.integer({ min: 1, max: 99 })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('adjust' as const),
      cents: fc.integer({ min: -3000, max: 3000 }).filter((c) => c !== 0),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('reject' as const), which: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('payouts' as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('paid' as const), which: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), which: fc.nat() }) },
);

interface Entry {
  id: string;
  type: string;
  status: string;
  amount: number;
  currency: string;
  conversion_id: string | null;
  payout_id: string | null;
}
interface Payout {
  id: string;
  status: string;
  amount: number;
  currency: string;
  program_id: string;
  affiliate_id: string;
}

const cents = (n: number) => Math.round(n * 100);
const LIVE = new Set(['pending', 'approved', 'on_hold', 'paid']);

describe('ledger: the books balance for any sequence (fast-check, real PostgreSQL)', () => {
  it(
    'entries = paid + owed; each conversion nets its commission; payouts carry exactly their entries',
    { timeout: 240_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 18 }), async (ops) => {
          const m = await createMerchant({ commission_value: 30, hold_days: 0 });
          const conversions: string[] = [];
          const amounts: number[] = [];
          const payouts: string[] = [];
          const all = async <T>(path: string, key: string): Promise<T[]> => {
            const out: T[] = [];
            let cursor: string | null = null;
            do {
              const res: { status: number; body: { data: Record<string, unknown> } } = await m.api.get(
                `${path}${path.includes('?') ? '&' : '?'}limit=100${cursor ? `&cursor=${cursor}` : ''}`,
              );
              expect(res.status).toBe(200);
              out.push(...(res.body.data[key] as T[]));
              cursor = res.body.data.next_cursor as string | null;
            } while (cursor);
            return out;
          };
          let n = 0;
          for (const op of ops) {
            if (op.op === 'sale') {
              const res = await m.api.post('/api/conversions', {
                external_id: `ch_${n++}`,
                amount: op.amount,
                currency: op.currency,
                ref: m.slug,
              });
              expect(res.status, JSON.stringify(res.body)).toBe(201);
              conversions.push(res.body.data.conversion.id);
              amounts.push(op.amount);
            } else if (op.op === 'refund' && conversions.length) {
              const i = op.which % conversions.length;
              // A running total (no refund_id): a smaller one than already reported changes nothing.
              const body = op.part === 'all' ? {} : { amount: Math.floor(amounts[i] * op.part) / 100 };
              const res = await m.api.post(`/api/conversions/${conversions[i]}/refund`, body);
              expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
            } else if (op.op === 'adjust') {
              const res = await m.api.post('/api/commissions', {
                affiliate_id: m.affiliate.id,
                amount: op.cents / 100,
                description: 'correction',
              });
              expect(res.status, JSON.stringify(res.body)).toBe(201);
            } else if (op.op === 'reject') {
              // Sales and adjustments (a clawback rejected is a debt forgiven: the merchant's choice, outside these books' rule).
              const entries = (await all<Entry>('/api/commissions', 'commissions')).filter(
                (e) =>
                  e.type !== 'clawback' && e.payout_id === null && (e.status === 'approved' || e.status === 'pending'),
              );
              if (entries.length) {
                const res = await m.api.post(`/api/commissions/${entries[op.which % entries.length].id}/reject`, {
                  reason: 'test',
                });
                // 409 when a clawback of the sale is in a payout.
                expect([200, 409], JSON.stringify(res.body)).toContain(res.status);
              }
            } else if (op.op === 'payouts') {
              const res = await m.api.post('/api/payouts', {});
              expect(res.status, JSON.stringify(res.body)).toBe(201);
              payouts.push(...res.body.data.payouts.map((p: Payout) => p.id));
            } else if ((op.op === 'paid' || op.op === 'cancel') && payouts.length) {
              const id = payouts[op.which % payouts.length];
              const res = await m.api.post(`/api/payouts/${id}/${op.op}`, {});
              // Settling a settled payout is refused (409) and changes nothing.
              expect([200, 409], JSON.stringify(res.body)).toContain(res.status);
            }
          }

          const entries = await all<Entry>('/api/commissions', 'commissions');
          const allPayouts = await all<Payout>('/api/payouts', 'payouts');
          const live = entries.filter((e) => LIVE.has(e.status));
          const sum = (list: Entry[]) => list.reduce((s, e) => s + cents(e.amount), 0);

          for (const id of conversions) {
            const conversion = (await m.api.get(`/api/conversions/${id}`)).body.data.conversion;
            const rejectedSale = entries.some(
              (e) => e.conversion_id === id && e.type === 'sale' && e.status === 'rejected',
            );
            // A rejected sale owes nothing, its clawbacks rejected with it.
            expect(sum(live.filter((e) => e.conversion_id === id)), `conversion ${id}`).toBe(
              rejectedSale ? 0 : cents(conversion.commission_amount),
            );
          }
          for (const currency of ['USD', 'EUR']) {
            const inCurrency = live.filter((e) => e.currency === currency);
            const paid = allPayouts
              .filter((p) => p.status === 'paid' && p.currency === currency)
              .reduce((s, p) => s + cents(p.amount), 0);
            const paidIds = new Set(allPayouts.filter((p) => p.status === 'paid').map((p) => p.id));
            const owed = sum(inCurrency.filter((e) => !e.payout_id || !paidIds.has(e.payout_id)));
            expect(sum(inCurrency), `${currency}: entries = paid + owed`).toBe(paid + owed);
          }
          for (const p of allPayouts) {
            expect(p.amount).toBeGreaterThan(0);
            if (p.status === 'canceled') expect(entries.filter((e) => e.payout_id === p.id)).toEqual([]);
            else expect(sum(entries.filter((e) => e.payout_id === p.id)), `payout ${p.id}`).toBe(cents(p.amount));
          }
        }),
        { numRuns: 30 },
      );
    },
  );
});
