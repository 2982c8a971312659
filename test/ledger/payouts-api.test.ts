import { describe, expect, it } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { createMerchant, createOrganization, expectError, request } from '../support/api.js';
import { rejection } from '../support/rejection.js';
import { testServer } from '../support/server.js';
import { sql } from 'kysely';

type Merchant = Awaited<ReturnType<typeof createMerchant>>;

async function adjust(m: Merchant, amount: number, over: Record<string, unknown> = {}) {
  const res = await m.api.post('/api/commissions', {
    affiliate_id: m.affiliate.id,
    amount,
    description: `adjustment ${amount}`,
    ...over,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.commission;
}

async function secondAffiliate(m: Merchant, over: Record<string, unknown> = {}) {
  const res = await m.api.post('/api/affiliates', {
    email: `b-${Math.random().toString(36).slice(2)}@example.com`,
    program_id: m.program.id,
    ...over,
  });
  expect(res.status).toBe(201);
  return res.body.data.affiliate;
}

describe('commissions: adjustments, approve, reject', () => {
  it('an adjustment is approved at once, in the program currency, and listed', async () => {
    const m = await createMerchant({ currency: 'EUR' });
    const c = await adjust(m, 12.5);
    expect(c).toMatchObject({
      type: 'adjustment',
      status: 'approved',
      amount: 12.5,
      currency: 'EUR',
      affiliate_id: m.affiliate.id,
      program_id: m.program.id,
      conversion_id: null,
      payout_id: null,
      description: 'adjustment 12.5',
    });
    const list = await m.api.get('/api/commissions?type=adjustment&status=approved');
    expect(list.body.data.commissions.map((x: { id: string }) => x.id)).toEqual([c.id]);
    expect((await m.api.get(`/api/commissions/${c.id}`)).body.data.commission).toEqual(c);
  });

  it('refuses an adjustment of 0, finer than the currency, or for an affiliate of another organization', async () => {
    const m = await createMerchant();
    const other = await createMerchant();
    expectError(
      await m.api.post('/api/commissions', { affiliate_id: m.affiliate.id, amount: 0, description: 'x' }),
      400,
      /amount/,
    );
    expectError(
      await m.api.post('/api/commissions', { affiliate_id: m.affiliate.id, amount: 1.005, description: 'x' }),
      400,
      /at most 2 decimals/,
    );
    expectError(
      await m.api.post('/api/commissions', { affiliate_id: other.affiliate.id, amount: 5, description: 'x' }),
      404,
      'Affiliate not found',
    );
  });

  it('reject keeps a reason; a rejected entry cannot be approved; another organization gets 403', async () => {
    const m = await createMerchant();
    const c = await adjust(m, 5);
    const rejected = await m.api.post(`/api/commissions/${c.id}/reject`, { reason: 'duplicate' });
    expect(rejected.body.data.commission).toMatchObject({ status: 'rejected', rejection_reason: 'duplicate' });
    expect((await m.api.post(`/api/commissions/${c.id}/reject`, {})).status).toBe(200);
    expectError(await m.api.post(`/api/commissions/${c.id}/approve`), 409, 'A rejected commission cannot be approved');
    const other = await createOrganization();
    expectError(await other.api.get(`/api/commissions/${c.id}`), 403);
    expectError(await other.api.post(`/api/commissions/${c.id}/approve`), 403);
    expectError(await m.api.get('/api/commissions/00000000-0000-4000-8000-000000000000'), 404, 'Commission not found');
  });
});

describe('ledger lists', () => {
  it('commissions and payouts page newest first with next_cursor, each entry once', async () => {
    const m = await createMerchant();
    const created = [];
    for (const amount of [1, 2, 3]) created.push(await adjust(m, amount));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { commissions: { id: string }[]; next_cursor: string | null } } } = await m.api.get(
        `/api/commissions?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.body.data.commissions.map((c) => c.id));
      cursor = page.body.data.next_cursor;
    } while (cursor);
    // Every entry exactly once (entries created in the same millisecond are ordered by id).
    expect(seen).toHaveLength(3);
    expect([...seen].sort()).toEqual(created.map((c) => c.id).sort());
    await m.api.post('/api/payouts', {});
    const payouts = await m.api.get('/api/payouts?limit=1');
    expect(payouts.body.data.payouts).toHaveLength(1);
    expect(payouts.body.data.next_cursor).toBeNull();
  });

  it('the unfiltered list merges every status newest first, page after page, each entry once', async () => {
    const m = await createMerchant();
    const click = await m.api.post('/api/clicks', { ref: m.slug });
    const cookie = click.body.data.click.cookie_id;
    const created: string[] = [];
    for (let i = 0; i < 7; i++) {
      if (i % 2 === 0) {
        created.push((await adjust(m, i + 1)).id);
      } else {
        const sale = await m.api.post('/api/conversions', {
          external_id: `mix_${i}_${Math.random()}`,
          amount: 100,
          cookie_id: cookie,
        });
        expect(sale.status).toBe(201);
        const entry = (await m.api.get(`/api/commissions?type=sale&limit=1`)).body.data.commissions[0];
        created.push(entry.id);
      }
    }
    // Three stored statuses: rejected (one of each type), paid (the approved adjustments, through a payout), pending (the other sales).
    expect((await m.api.post(`/api/commissions/${created[1]}/reject`, { reason: 'test' })).status).toBe(200);
    expect((await m.api.post(`/api/commissions/${created[0]}/reject`, { reason: 'test' })).status).toBe(200);
    const payout = await m.api.post('/api/payouts', {});
    expect(payout.status).toBe(201);
    const paid = await m.api.post(`/api/payouts/${payout.body.data.payouts[0].id}/paid`, { reference: 'ref-1' });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    const statuses = new Set<string>();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { commissions: { id: string; status: string }[]; next_cursor: string | null } } } =
        await m.api.get(`/api/commissions?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      for (const c of page.body.data.commissions) {
        seen.push(c.id);
        statuses.add(c.status);
      }
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect([...statuses].sort()).toEqual(['paid', 'pending', 'rejected']);
    // Newest first: the reverse of creation (ids are time-ordered, created one after the other).
    expect(seen).toEqual([...created].reverse());
  });
});

describe('payouts', () => {
  it('one payout per affiliate and currency, net of negative entries; minimum_payout and a negative net wait', async () => {
    const m = await createMerchant({ minimum_payout: 20 });
    const b = await secondAffiliate(m);
    const c = await secondAffiliate(m);
    await adjust(m, 30);
    await adjust(m, -5);
    await adjust(m, 7, { currency: 'EUR' }); // another currency: its own group; the USD minimum does not apply to it
    await adjust(m, 10, { affiliate_id: b.id }); // below the minimum: waits
    await adjust(m, -3, { affiliate_id: c.id }); // negative net: waits
    const res = await m.api.post('/api/payouts', {});
    expect(res.status).toBe(201);
    expect(res.body.data.payouts).toHaveLength(2);
    const usd = res.body.data.payouts.find((p: { currency: string }) => p.currency === 'USD');
    const eur = res.body.data.payouts.find((p: { currency: string }) => p.currency === 'EUR');
    expect(usd).toEqual(
      expect.objectContaining({
        affiliate_id: m.affiliate.id,
        program_id: m.program.id,
        amount: 25,
        status: 'pending',
        commission_count: 2,
        reference: null,
        paid_at: null,
      }),
    );
    expect(eur).toEqual(expect.objectContaining({ affiliate_id: m.affiliate.id, amount: 7, commission_count: 1 }));
    const carried = await m.api.get(`/api/commissions?affiliate_id=${m.affiliate.id}`);
    for (const entry of carried.body.data.commissions)
      expect(entry.payout_id).toBe(entry.currency === 'USD' ? usd.id : eur.id);
    // Nothing left to gather for that affiliate: a second run creates nothing.
    expect((await m.api.post('/api/payouts', {})).body.data.payouts).toEqual([]);
  });

  it('a run gathers only the program, currency and approval time it is scoped to', async () => {
    const m = await createMerchant();
    const before = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await adjust(m, 8);
    await adjust(m, 9, { currency: 'EUR' });
    expect((await m.api.post('/api/payouts', { approved_before: before })).body.data.payouts).toEqual([]);
    const other = await m.api.post('/api/programs', { name: 'Other', commission_value: 5 });
    expect((await m.api.post('/api/payouts', { program_id: other.body.data.program.id })).body.data.payouts).toEqual(
      [],
    );
    const eur = (await m.api.post('/api/payouts', { currency: 'eur' })).body.data.payouts;
    expect(eur).toEqual([expect.objectContaining({ currency: 'EUR', amount: 9 })]);
    const rest = (await m.api.post('/api/payouts', { program_id: m.program.id })).body.data.payouts;
    expect(rest).toEqual([expect.objectContaining({ currency: 'USD', amount: 8 })]);
    // The export writes its times as every answer does: ISO-8601 in UTC.
    const csv = await request('GET', '/api/payouts/export', { key: m.key });
    expect(String(csv.body)).toContain(`,${rest[0].created_at},`);
  });

  it('paid: entries paid for good; cancel: entries released to the next payout; 409s between them', async () => {
    const m = await createMerchant();
    const entry = await adjust(m, 40);
    const [payout] = (await m.api.post('/api/payouts', {})).body.data.payouts;
    expectError(await m.api.post(`/api/commissions/${entry.id}/reject`, {}), 409, /in a payout/);
    const canceled = await m.api.post(`/api/payouts/${payout.id}/cancel`);
    expect(canceled.body.data.payout).toMatchObject({ status: 'canceled', canceled_at: expect.any(String) });
    expect((await m.api.get(`/api/commissions/${entry.id}`)).body.data.commission).toMatchObject({
      status: 'approved',
      payout_id: null,
    });
    expectError(await m.api.post(`/api/payouts/${payout.id}/paid`, {}), 409, 'A canceled payout cannot be marked paid');

    const [again] = (await m.api.post('/api/payouts', {})).body.data.payouts;
    expect(again).toMatchObject({ amount: 40, commission_count: 1 });
    const paid = await m.api.post(`/api/payouts/${again.id}/paid`, { reference: 'PP-BATCH-1' });
    expect(paid.body.data.payout).toMatchObject({
      status: 'paid',
      reference: 'PP-BATCH-1',
      paid_at: expect.any(String),
    });
    expect((await m.api.post(`/api/payouts/${again.id}/paid`, {})).body.data.payout).toEqual(paid.body.data.payout);
    expect((await m.api.get(`/api/commissions/${entry.id}`)).body.data.commission).toMatchObject({
      status: 'paid',
      payout_id: again.id,
    });
    expectError(await m.api.post(`/api/payouts/${again.id}/cancel`), 409, 'A paid payout cannot be canceled');
    expect((await m.api.get('/api/payouts?status=paid')).body.data.payouts.map((p: { id: string }) => p.id)).toEqual([
      again.id,
    ]);
  });

  it('concurrent payout runs never put an entry in two payouts', async () => {
    const m = await createMerchant();
    const others = await Promise.all([secondAffiliate(m), secondAffiliate(m), secondAffiliate(m)]);
    for (const a of [m.affiliate, ...others])
      for (const amount of [10, 20, -4]) await adjust(m, amount, { affiliate_id: a.id });
    const runs = await Promise.all(Array.from({ length: 6 }, () => m.api.post('/api/payouts', {})));
    for (const r of runs) expect(r.status).toBe(201);
    const payouts = runs.flatMap((r) => r.body.data.payouts);
    expect(payouts).toHaveLength(4);
    expect(new Set(payouts.map((p: { affiliate_id: string }) => p.affiliate_id)).size).toBe(4);
    for (const p of payouts) expect(p).toMatchObject({ amount: 26, commission_count: 3 });
  });

  it('the database itself holds an entry in one payout, and payout_items alone records which, pending or paid', async () => {
    const { db } = await testServer();
    const handle = Db.of(db.orm);
    const m = await createMerchant();
    const entry = await adjust(m, 15);
    const [first] = (await m.api.post('/api/payouts', {})).body.data.payouts;
    // While the payout is pending, the entry shows it (and was touched no earlier than the payout's creation).
    const carried = (await m.api.get(`/api/commissions/${entry.id}`)).body.data.commission;
    expect(carried).toMatchObject({ status: 'approved', payout_id: first.id });
    expect(Date.parse(carried.updated_at)).toBeGreaterThanOrEqual(Date.parse(first.created_at));
    expect(
      (await m.api.get(`/api/commissions?status=approved`)).body.data.commissions.find(
        (c: { id: string }) => c.id === entry.id,
      ),
    ).toMatchObject({ payout_id: first.id });
    // A second payout for the same entry: refused by payout_items' primary key, whatever the code does.
    const [other] = await handle.rows(
      sql<{
        id: string;
      }>`insert into payouts (id, organization_id, affiliate_id, program_id, currency, amount, status, commission_count) values (gen_random_uuid(), ${m.id}, ${m.affiliate.id}, ${m.program.id}, 'USD', 15, 'pending', 1) returning id`,
    );
    expect(
      String(
        await rejection(
          handle.rows(
            sql`insert into payout_items (organization_id, commission_id, payout_id) values (${m.id}, ${entry.id}, ${other.id})`,
          ),
        ),
      ),
    ).toMatch(/payout_items_pkey/);
    // One truth: no column of the entries names a payout (Migration20270117100000_one_payout_membership).
    expect(
      await handle.rows(
        sql`select column_name from information_schema.columns where table_schema = current_schema() and table_name = 'commissions' and column_name like '%payout%'`,
      ),
    ).toEqual([]);
    // Paid, the entry stays in payout_items: the record of the payout that paid it.
    expect((await m.api.post(`/api/payouts/${first.id}/paid`, {})).status).toBe(200);
    expect(
      await handle.rows(
        sql`select commission_id from payout_items where organization_id = ${m.id} and payout_id = ${first.id}`,
      ),
    ).toEqual([{ commission_id: entry.id }]);
    expect((await m.api.get(`/api/commissions/${entry.id}`)).body.data.commission).toMatchObject({
      status: 'paid',
      payout_id: first.id,
    });
  });

  it('a refund racing a payout run: the run waits for it or it sees the run; the books add up either way', async () => {
    for (let round = 0; round < 5; round++) {
      const m = await createMerchant({ hold_days: 0 });
      const sales = await Promise.all(
        [40, 60, 80].map(
          async (amount, i) =>
            (
              await m.api.post('/api/conversions', {
                external_id: `race-${round}-${i}-${Math.random()}`,
                amount,
                ref: m.slug,
              })
            ).body.data.conversion,
        ),
      );
      const [run, ...refunds] = await Promise.all([
        m.api.post('/api/payouts', {}),
        ...sales.map((s) => m.api.post(`/api/conversions/${s.id}/refund`, { amount: 10 })),
      ]);
      expect(run.status).toBe(201);
      for (const r of refunds) expect(r.status, JSON.stringify(r.body)).toBe(200);
      const entries = (await m.api.get(`/api/commissions?limit=100`)).body.data.commissions as {
        type: string;
        amount: number;
        payout_id: string | null;
      }[];
      // 30 % of each sale less 30 % of the 10 refunded, whichever came first: the sale entry reduced by 3, or a clawback of -3.
      expect(entries.reduce((sum, e) => sum + Math.round(e.amount * 100), 0)).toBe(1200 + 1800 + 2400 - 3 * 300);
      const payouts = run.body.data.payouts as { id: string; amount: number }[];
      for (const p of payouts)
        expect(
          entries.filter((e) => e.payout_id === p.id).reduce((sum, e) => sum + Math.round(e.amount * 100), 0),
        ).toBe(Math.round(p.amount * 100));
    }
  });

  it('exports the pending payouts as CSV, PayPal and Wise files', async () => {
    const m = await createMerchant();
    await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { payout_email: 'jane.pay@example.com', name: 'Jane' });
    await adjust(m, 12.3);
    const [payout] = (await m.api.post('/api/payouts', {})).body.data.payouts;
    const paypal = await request('GET', '/api/payouts/export?format=paypal', { key: m.key });
    expect(paypal.status).toBe(200);
    expect(paypal.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(paypal.body).toBe(
      `jane.pay@example.com,12.30,USD,${payout.id.replaceAll('-', '').slice(0, 30)},"Affiliate commissions, payout ${payout.id}",PAYPAL\n`,
    );
    const wise = await request('GET', '/api/payouts/export?format=wise', { key: m.key });
    expect(String(wise.body).split('\n')[1]).toBe(
      `Jane,jane.pay@example.com,Payout ${payout.id.slice(0, 8)},PERSON,target,12.30,USD,USD`,
    );
    const csv = await request('GET', '/api/payouts/export', { key: m.key });
    expect(String(csv.body)).toContain(`${payout.id},${m.affiliate.id}`);
    expectError(await m.api.get('/api/payouts/export?format=xls'), 400, /format/);
  });
});
