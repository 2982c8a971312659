import { describe, expect, it } from 'vitest';
import { createMerchant, type Api } from '../support/api.js';
import { newRowId } from '../../server/src/db/row-ids.js';

type Merchant = Awaited<ReturnType<typeof createMerchant>>;
interface Entry {
  id: string;
  type: string;
  status: string;
  amount: number;
  conversion_id: string | null;
  customer_id: string | null;
  approves_at: string | null;
  payout_id: string | null;
}

let seq = 0;
const uid = (prefix: string) =>
  `${prefix}_${Date.now().toString(36)}${(++seq).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

async function convert(m: Merchant, body: Record<string, unknown>) {
  const res = await m.api.post('/api/conversions', { external_id: uid('ch'), amount: 100, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.conversion;
}

async function entriesOf(api: Api, conversionId: string): Promise<Entry[]> {
  const res = await api.get(`/api/commissions?limit=100`);
  expect(res.status).toBe(200);
  return (res.body.data.commissions as Entry[]).filter((e) => e.conversion_id === conversionId);
}

async function refund(m: Merchant, conversionId: string, body: Record<string, unknown>) {
  const res = await m.api.post(`/api/conversions/${conversionId}/refund`, body);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body.data.conversion;
}

describe('sale entries: written with their conversion, on every path', () => {
  it('a conversion by click gets one pending entry, held hold_days from occurred_at (approved by itself once that passes)', async () => {
    const m = await createMerchant({ commission_value: 30, hold_days: 60 });
    const occurred = new Date(Date.now() - 86_400_000).toISOString();
    const c = await convert(m, { ref: m.slug, occurred_at: occurred });
    const [entry, ...more] = await entriesOf(m.api, c.id);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      type: 'sale',
      status: 'pending',
      amount: 30,
      currency: 'USD',
      affiliate_id: m.affiliate.id,
      program_id: m.program.id,
      customer_id: null,
      payout_id: null,
    });
    expect(entry.approves_at).toBe(new Date(Date.parse(occurred) + 60 * 86_400_000).toISOString());
    const old = await convert(m, { ref: m.slug, occurred_at: '2026-08-01T10:00:00.000Z' });
    expect(await entriesOf(m.api, old.id)).toEqual([
      expect.objectContaining({ status: 'approved', approves_at: '2026-09-30T10:00:00.000Z' }),
    ]);
  });

  it('by customer: the first sale and each renewal get theirs; a repeat of a charge adds none', async () => {
    const m = await createMerchant({ commission_value: 10 });
    const customer = uid('cus');
    expect((await m.api.post('/api/customers', { customer_id: customer, ref: m.slug })).status).toBe(201);
    const first = await convert(m, { customer_id: customer, amount: 50 });
    const renewal = await convert(m, { customer_id: customer, amount: 50 });
    const repeat = await m.api.post('/api/conversions', {
      external_id: renewal.external_id,
      customer_id: customer,
      amount: 50,
    });
    expect(repeat.body.deduped).toBe(true);
    for (const c of [first, renewal])
      expect(await entriesOf(m.api, c.id)).toEqual([
        expect.objectContaining({ type: 'sale', amount: 5, customer_id: customer }),
      ]);
    const all = await m.api.get(`/api/commissions?affiliate_id=${m.affiliate.id}`);
    expect(all.body.data.commissions).toHaveLength(2);
  });

  it('hold_days 0 approves at once; auto_approve false waits for the merchant with no approves_at', async () => {
    const now = await createMerchant({ hold_days: 0 });
    const c = await convert(now, { ref: now.slug });
    expect(await entriesOf(now.api, c.id)).toEqual([expect.objectContaining({ status: 'approved' })]);
    const manual = await createMerchant({ auto_approve: false, hold_days: 0 });
    const d = await convert(manual, { ref: manual.slug });
    const [entry] = await entriesOf(manual.api, d.id);
    expect(entry).toMatchObject({ status: 'pending', approves_at: null });
    const approved = await manual.api.post(`/api/commissions/${entry.id}/approve`);
    expect(approved.body.data.commission.status).toBe('approved');
  });

  it('a conversion earning nothing has no entry (a zero amount, or past the commission window)', async () => {
    const m = await createMerchant({ commission_window_months: 1 });
    const zero = await convert(m, { ref: m.slug, amount: 0 });
    expect(zero.commission_amount).toBe(0);
    expect(await entriesOf(m.api, zero.id)).toEqual([]);
    const customer = uid('cus');
    await m.api.post('/api/customers', { customer_id: customer, ref: m.slug });
    await convert(m, { customer_id: customer, occurred_at: '2026-01-01T00:00:00Z' });
    const late = await convert(m, { customer_id: customer, occurred_at: '2026-06-01T00:00:00Z' });
    expect(late.commission_amount).toBe(0);
    expect(await entriesOf(m.api, late.id)).toEqual([]);
  });

  it('200 concurrent conversions (batched statements) make exactly one entry each', async () => {
    const m = await createMerchant({ commission_value: 10 });
    const created = await Promise.all(
      Array.from({ length: 200 }, (_, i) => convert(m, { ref: m.slug, amount: 10 + i })),
    );
    const seen = new Map<string, number>();
    let cursor: string | null = null;
    do {
      const page: { body: { data: { commissions: Entry[]; next_cursor: string | null } } } = await m.api.get(
        `/api/commissions?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      );
      for (const e of page.body.data.commissions) seen.set(e.conversion_id!, (seen.get(e.conversion_id!) ?? 0) + 1);
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(seen.size).toBe(200);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    for (const c of created) expect(seen.get(c.id)).toBe(1);
  });
});

describe('refunds and the ledger', () => {
  it('before payment: a partial refund reduces the entry in proportion, a full one reverses it (amount kept)', async () => {
    const m = await createMerchant({ commission_value: 30 });
    const c = await convert(m, { ref: m.slug, amount: 100 });
    await refund(m, c.id, { amount: 40 });
    expect(await entriesOf(m.api, c.id)).toEqual([
      expect.objectContaining({ type: 'sale', status: 'pending', amount: 18 }),
    ]);
    await refund(m, c.id, {});
    expect(await entriesOf(m.api, c.id)).toEqual([
      expect.objectContaining({ type: 'sale', status: 'reversed', amount: 18 }),
    ]);
  });

  it('after payment: the paid entry stays, an approved clawback takes back the refunded part and is netted in the next payout', async () => {
    const m = await createMerchant({ commission_value: 30, hold_days: 0 });
    const c = await convert(m, { ref: m.slug, amount: 100 });
    const [payout] = (await m.api.post('/api/payouts', {})).body.data.payouts;
    expect(payout).toMatchObject({ amount: 30, commission_count: 1 });
    expect((await m.api.post(`/api/payouts/${payout.id}/paid`, { reference: 'batch-1' })).status).toBe(200);
    await refund(m, c.id, { amount: 50 });
    const entries = await entriesOf(m.api, c.id);
    expect(entries.find((e) => e.type === 'sale')).toMatchObject({ status: 'paid', amount: 30, payout_id: payout.id });
    expect(entries.find((e) => e.type === 'clawback')).toMatchObject({
      status: 'approved',
      amount: -15,
      payout_id: null,
      customer_id: null,
    });
    // The clawback alone nets negative: no payout, it carries over.
    expect((await m.api.post('/api/payouts', {})).body.data.payouts).toEqual([]);
    await convert(m, { ref: m.slug, amount: 200 });
    const [next] = (await m.api.post('/api/payouts', {})).body.data.payouts;
    expect(next).toMatchObject({ amount: 45, commission_count: 2 });
  });

  it('a refund while the entry sits in a pending payout claws back; canceling that payout then leaves entry + clawback netting the commission', async () => {
    const m = await createMerchant({ commission_value: 30, hold_days: 0 });
    const c = await convert(m, { ref: m.slug, amount: 100 });
    const [payout] = (await m.api.post('/api/payouts', {})).body.data.payouts;
    await refund(m, c.id, { amount: 40 });
    await m.api.post(`/api/payouts/${payout.id}/cancel`);
    await refund(m, c.id, { amount: 80 });
    const entries = await entriesOf(m.api, c.id);
    const net =
      entries
        .filter((e) => e.status !== 'reversed' && e.status !== 'rejected')
        .reduce((sum, e) => sum + Math.round(e.amount * 100), 0) / 100;
    const conversion = (await m.api.get(`/api/conversions/${c.id}`)).body.data.conversion;
    expect(conversion.commission_amount).toBe(6);
    expect(net).toBe(6);
    const [again] = (await m.api.post('/api/payouts', {})).body.data.payouts;
    expect(again.amount).toBe(6);
  });

  it('a refund racing a payout creation leaves the books consistent', async () => {
    for (let round = 0; round < 5; round++) {
      const m = await createMerchant({ commission_value: 30, hold_days: 0 });
      const c = await convert(m, { ref: m.slug, amount: 100 });
      const [payouts] = await Promise.all([m.api.post('/api/payouts', {}), refund(m, c.id, { amount: 50 })]);
      const created = payouts.body.data.payouts as { id: string; amount: number }[];
      const entries = await entriesOf(m.api, c.id);
      const cents = (list: Entry[]) => list.reduce((sum, e) => sum + Math.round(e.amount * 100), 0);
      // Whichever went first, the entries owe the conversion's commission after the refund…
      expect(cents(entries.filter((e) => e.status !== 'reversed' && e.status !== 'rejected'))).toBe(1500);
      // …and a payout carries exactly what its entries say, never a clawback of its own entry.
      for (const p of created)
        expect(Math.round(p.amount * 100)).toBe(cents(entries.filter((e) => e.payout_id === p.id)));
      const clawbacks = entries.filter((e) => e.type === 'clawback');
      expect(clawbacks.length).toBeLessThanOrEqual(1);
      if (clawbacks.length === 1) expect(created.map((p) => p.amount)).toEqual([30]);
    }
  });
});

describe('row ids', () => {
  it('new conversions, their entries and customers get time-ordered ids (UUIDv7: db/row-ids.ts), each entry its own', async () => {
    const m = await createMerchant({ commission_value: 10 });
    const customer = uid('cus');
    const created = await m.api.post('/api/customers', { customer_id: customer, ref: m.slug });
    expect(created.status).toBe(201);
    const before = Date.now();
    const conversions = [];
    for (let i = 0; i < 3; i++) conversions.push(await convert(m, { customer_id: customer, amount: 50 }));
    const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const millisOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);
    expect(created.body.data.customer.id).toMatch(v7);
    const entries = [];
    for (const c of conversions) {
      expect(c.id).toMatch(v7);
      expect(millisOf(c.id)).toBeGreaterThanOrEqual(before - 1000);
      expect(millisOf(c.id)).toBeLessThanOrEqual(Date.now() + 1000);
      const [entry] = await entriesOf(m.api, c.id);
      expect(entry.id).toMatch(v7);
      expect(entry.id).not.toBe(c.id);
      entries.push(entry.id);
    }
    // Made one after the other: each id sorts after the one before (what keeps the keys' btrees appending).
    expect([...conversions.map((c) => c.id)].sort()).toEqual(conversions.map((c) => c.id));
    expect([...entries].sort()).toEqual(entries);
  });

  it('newRowId: made in a burst (many per millisecond, past several refills of its random pool) every id is a distinct v7 and sorts after the one before', () => {
    const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const before = Date.now();
    const ids = Array.from({ length: 5000 }, () => newRowId());
    const after = Date.now();
    for (const id of ids) expect(id).toMatch(v7);
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1], `${ids[i - 1]} then ${ids[i]}`).toBe(true);
    const millisOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);
    expect(millisOf(ids[0])).toBeGreaterThanOrEqual(before);
    expect(millisOf(ids.at(-1)!)).toBeLessThanOrEqual(after);
    // the random part is fresh per id: the last 10 hex digits (40 random bits) never repeat here
    expect(new Set(ids.map((id) => id.slice(-10))).size).toBe(ids.length);
  });
});
