import { describe, expect, it } from 'vitest';
import { effectiveStatus } from '../../server/src/modules/commissions/commission-lifecycle.js';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';

/**
 * The approval-by-time rule has one SQL definition (the baseline migration's commission_due and
 * commission_status_at, used by lists, payouts, the portal and reports) and one TypeScript
 * function (effectiveStatus): they agree on every case, the pending entry without approves_at
 * (a program that does not approve automatically) included, which is pending and never due.
 */
describe('the approval-by-time rule', () => {
  const now = new Date('2026-11-27T12:00:00Z');
  const past = new Date('2026-11-27T11:00:00Z');
  const future = new Date('2026-11-27T13:00:00Z');
  const cases = [
    ['pending', null],
    ['pending', past],
    ['pending', now],
    ['pending', future],
    ['on_hold', past],
    ['approved', null],
    ['rejected', past],
    ['paid', past],
  ] as const;

  it('SQL and TypeScript agree, and a pending entry without approves_at is never due', async () => {
    const { db } = await testServer();
    const connection = db.orm.em.getConnection();
    for (const [status, approvesAt] of cases) {
      const [row] = await connection.execute<{ status: string; due: boolean; not_due: boolean }[]>(
        `select commission_status_at(?, ?::timestamptz, ?::timestamptz) as status, commission_due(?, ?::timestamptz, ?::timestamptz) as due,
           not commission_due(?, ?::timestamptz, ?::timestamptz) as not_due`,
        [status, approvesAt, now, status, approvesAt, now, status, approvesAt, now],
      );
      const expected = effectiveStatus({ status, approvesAt }, now);
      expect({ status, approvesAt, sql: row.status }).toEqual({ status, approvesAt, sql: expected });
      expect(row.due).toBe(status === 'pending' && expected === 'approved');
      // Never null: "not due" keeps the pending entries that wait for the merchant.
      expect(row.not_due).toBe(!row.due);
    }
  });

  it('GET /api/commissions?status=pending lists the entries waiting for the merchant (no approves_at)', async () => {
    const m = await createMerchant({ auto_approve: false, hold_days: 0 });
    const conversion = await m.api.post('/api/conversions', { external_id: 'manual-1', amount: 100, ref: m.slug });
    expect(conversion.status).toBe(201);
    const pending = await m.api.get('/api/commissions?status=pending');
    expect(pending.status).toBe(200);
    expect(
      pending.body.data.commissions.map((c: { status: string; approves_at: string | null }) => [
        c.status,
        c.approves_at,
      ]),
    ).toEqual([['pending', null]]);
    const approved = await m.api.get('/api/commissions?status=approved');
    expect(approved.body.data.commissions).toEqual([]);
  });
});
