import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMerchant } from '../support/api.js';

type Merchant = Awaited<ReturnType<typeof createMerchant>>;
const FROM = '2026-01-01T00:00:00Z';

async function sale(m: Merchant, body: Record<string, unknown> = {}) {
  const res = await m.api.post('/api/conversions', {
    external_id: `o-${randomUUID()}`,
    amount: 100,
    ref: m.slug,
    ...body,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.conversion as { id: string };
}

async function listed(
  m: Merchant,
  status: string,
): Promise<{ conversion_id: string; status: string; amount: number }[]> {
  const res = await m.api.get(`/api/commissions?status=${status}&limit=100`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.commissions;
}

async function reportedCommissions(m: Merchant) {
  const to = new Date(Date.now() + 3_600_000).toISOString();
  const res = await m.api.get(`/api/reports/affiliates?from=${FROM}&to=${to}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.affiliates[0].commissions as Record<string, number>;
}

const sum = (rows: { amount: number }[]) => rows.reduce((s, r) => s + r.amount, 0);

describe('GET /api/commissions?status=: the effective status, entries awaiting the merchant included', () => {
  it('auto_approve false: the entry (approves_at null) is listed under pending, not approved, as the report counts it; never payable until approved by hand', async () => {
    const m = await createMerchant({ auto_approve: false, hold_days: 0 });
    const c = await sale(m, { occurred_at: '2026-03-01T10:00:00Z' });
    const all = await listed(m, 'pending');
    expect(all.map((e) => e.conversion_id)).toEqual([c.id]);
    expect(all[0]).toMatchObject({ status: 'pending', amount: 30 });
    expect(await listed(m, 'approved')).toEqual([]);
    const unfiltered = (await m.api.get('/api/commissions')).body.data.commissions;
    expect(unfiltered).toHaveLength(1);
    expect(await reportedCommissions(m)).toMatchObject({ pending: sum(all), approved: 0 });

    // Waiting for the merchant: no payout carries it, whatever the date.
    expect((await m.api.post('/api/payouts', {})).body.data.payouts).toEqual([]);
    const entry = (await m.api.post(`/api/commissions/${unfiltered[0].id}/approve`)).body.data.commission;
    expect(entry.status).toBe('approved');
    expect(await listed(m, 'pending')).toEqual([]);
    expect((await listed(m, 'approved')).map((e) => e.conversion_id)).toEqual([c.id]);
    expect(await reportedCommissions(m)).toMatchObject({ pending: 0, approved: 30 });
    const payouts = (await m.api.post('/api/payouts', {})).body.data.payouts;
    expect(payouts.map((p: { amount: number }) => p.amount)).toEqual([30]);
  });

  it('auto_approve true past approves_at: listed under approved, not pending; still in its hold: pending', async () => {
    const m = await createMerchant({ hold_days: 1 });
    const due = await sale(m, { occurred_at: '2026-03-01T10:00:00Z' });
    const held = await sale(m, { amount: 50 });
    expect((await listed(m, 'approved')).map((e) => e.conversion_id)).toEqual([due.id]);
    expect((await listed(m, 'pending')).map((e) => e.conversion_id)).toEqual([held.id]);
    expect(await reportedCommissions(m)).toMatchObject({ pending: 15, approved: 30 });
  });
});
