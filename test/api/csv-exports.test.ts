import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { EXPORT_PAGE_ROWS } from '../../server/src/modules/exports/csv-exports.js';
import { createMerchant, createOrganization, request } from '../support/api.js';
import { testServer } from '../support/server.js';
import { sql } from 'kysely';

/** GET /api/exports/{kind}: affiliates, commissions and conversions as CSV, streamed page by page. */
async function csv(key: string, kind: string, headers: Record<string, string> = {}) {
  const res = await request('GET', `/api/exports/${kind}`, { key, headers });
  expect(res.status, String(res.body)).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
  expect(res.headers.get('content-disposition')).toMatch(
    new RegExp(`^attachment; filename="${kind}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`),
  );
  return parse<Record<string, string>>(String(res.body), { columns: true });
}

describe('CSV exports', () => {
  it('affiliates, commissions and conversions with order, customer and approval dates; Unicode, quotes, commas and newlines survive; formulas are made inert', async () => {
    const m = await createMerchant({ hold_days: 0, currency: 'EUR', name: 'Café, "Crème"' });
    const tricky = 'Zoë "Zed" Ünal,\nJr.';
    const formula = '=HYPERLINK("http://evil.example","click")';
    expect((await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { name: tricky })).status).toBe(200);
    const other = await m.api.post('/api/affiliates', {
      email: 'formula@example.com',
      name: formula,
      program_id: m.program.id,
      slug: 'formula',
    });
    expect(other.status, JSON.stringify(other.body)).toBe(201);
    const sale = await m.api.post('/api/conversions', {
      external_id: '-ord,1"2\n3',
      amount: 100,
      customer_id: '+cust@example.com',
      ref: m.slug,
      occurred_at: '2026-06-01T10:00:00.000Z',
    });
    expect(sale.status, JSON.stringify(sale.body)).toBe(201);
    const plain = await m.api.post('/api/conversions', { external_id: 'order-2', amount: 19.9, ref: 'formula' });
    expect(plain.status).toBe(201);

    const affiliates = await csv(m.key, 'affiliates');
    expect(affiliates.map((a) => a.name)).toEqual([tricky, `'${formula}`]);
    expect(affiliates[0]).toMatchObject({
      id: m.affiliate.id,
      email: `${m.slug}@example.com`,
      slug: m.slug,
      status: 'active',
      program_id: m.program.id,
      program_name: 'Café, "Crème"',
      created_at: m.affiliate.created_at,
    });

    const conversions = await csv(m.key, 'conversions');
    expect(conversions).toHaveLength(2);
    const first = conversions.find((c) => c.id === sale.body.data.conversion.id)!;
    expect(first).toMatchObject({
      order_id: `'-ord,1"2\n3`,
      customer_id: `'+cust@example.com`,
      amount: '100.00',
      refunded_amount: '0.00',
      currency: 'EUR',
      commission_amount: '30.00',
      affiliate_id: m.affiliate.id,
      occurred_at: '2026-06-01T10:00:00.000Z',
      reversed_at: '',
    });
    const commissions = await csv(m.key, 'commissions');
    const entry = commissions.find((c) => c.order_id === `'-ord,1"2\n3`)!;
    const listed = (await m.api.get(`/api/commissions?affiliate_id=${m.affiliate.id}`)).body.data.commissions[0];
    // hold_days 0: approved at once, on its approves_at; the conversions file says when its commission was.
    expect(entry).toMatchObject({
      id: listed.id,
      type: 'sale',
      status: 'approved',
      amount: '30.00',
      currency: 'EUR',
      customer_id: `'+cust@example.com`,
      approves_at: listed.approves_at,
      approved_at: listed.approves_at,
    });
    expect(first.commission_approved_at).toBe(listed.approves_at);
    expect(commissions.find((c) => c.order_id === 'order-2')?.affiliate_email).toBe('formula@example.com');
  });

  it('a held commission has no approval date yet; an adjustment no order', async () => {
    const m = await createMerchant({ hold_days: 30 });
    expect((await m.api.post('/api/conversions', { external_id: 'o-1', amount: 50, ref: m.slug })).status).toBe(201);
    expect(
      (await m.api.post('/api/commissions', { affiliate_id: m.affiliate.id, amount: -5, description: '-fee' })).status,
    ).toBe(201);
    const rows = await csv(m.key, 'commissions');
    expect(rows.map((r) => [r.type, r.status, r.order_id, r.amount, r.approved_at === '', r.description])).toEqual([
      ['sale', 'pending', 'o-1', '15.00', true, ''],
      ['adjustment', expect.any(String), '', '-5.00', expect.any(Boolean), "'-fee"],
    ]);
  });

  it(`reads page after page (${EXPORT_PAGE_ROWS} rows each): every row once, rows created in the same instant included`, async () => {
    const m = await createMerchant();
    const { db } = await testServer();
    const total = EXPORT_PAGE_ROWS * 2 + 37;
    // One statement: every row has the same created_at, so the pages are told apart by id alone.
    await Db.of(db.orm).rows(sql`insert into affiliates (id, organization_id, program_id, email, slug, created_at)
       select gen_random_uuid(), ${m.id}, ${m.program.id}, 'bulk-' || n || '@example.com', 'bulk-' || n, now()
       from generate_series(1, ${total}::int) n`);
    const rows = await csv(m.key, 'affiliates');
    expect(rows).toHaveLength(total + 1);
    expect(new Set(rows.map((r) => r.id)).size).toBe(total + 1);
    expect(rows[0].id).toBe(m.affiliate.id);
  });

  it('test mode: the test data only; an unknown kind is a 400 naming it', async () => {
    const org = await createOrganization();
    const testProgram = await org.testApi.post('/api/programs', { name: 'Test', commission_value: 10 });
    expect(testProgram.status).toBe(201);
    expect(
      (
        await org.testApi.post('/api/affiliates', {
          email: 'test@example.com',
          program_id: testProgram.body.data.program.id,
        })
      ).status,
    ).toBe(201);
    expect((await csv(org.key, 'affiliates')).length).toBe(0);
    expect((await csv(org.testKey, 'affiliates')).map((a) => a.email)).toEqual(['test@example.com']);
    const bad = await request('GET', '/api/exports/payouts', { key: org.key });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ success: false, message: expect.stringContaining('kind') });
  });
});
