import { describe, expect, it } from 'vitest';
import { createMerchant, expectError, type Api } from '../support/api.js';

/**
 * Program rules (shared/spec/ledger.md, "Program rules and fraud signals") through the API, on
 * PostgreSQL: attribution models, the cap by count (under concurrency), tiers and per-affiliate
 * rates with the rate recorded on each entry, and coupons (click beats coupon).
 */

type Merchant = Awaited<ReturnType<typeof createMerchant>>;
let seq = 0;
const uid = (prefix: string) =>
  `${prefix}_${Date.now().toString(36)}${(++seq).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

async function saleEntryOf(api: Api, conversionId: string) {
  const res = await api.get('/api/commissions?limit=100');
  expect(res.status).toBe(200);
  return res.body.data.commissions.find(
    (e: { conversion_id: string; type: string }) => e.conversion_id === conversionId && e.type === 'sale',
  );
}

async function secondAffiliate(m: Merchant) {
  const slug = `two-${Math.random().toString(36).slice(2, 10)}`;
  const res = await m.api.post('/api/affiliates', { email: `${slug}@example.com`, program_id: m.program.id, slug });
  expect(res.status).toBe(201);
  return { affiliate: res.body.data.affiliate, slug };
}

describe('program settings', () => {
  it('defaults keep the old behaviour, and fraud_rules change only the rules named', async () => {
    const m = await createMerchant();
    expect(m.program).toMatchObject({
      attribution_model: 'last_click',
      commission_max_conversions: null,
      commission_tiers: null,
      fraud_rules: { self_referral: true, disposable_email: true, click_flood: true, fast_conversion: false },
    });
    const changed = await m.api.patch(`/api/programs/${m.program.id}`, {
      fraud_rules: { fast_conversion: true, disposable_email: false },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data.program.fraud_rules).toEqual({
      self_referral: true,
      disposable_email: false,
      click_flood: true,
      fast_conversion: true,
    });
    const again = await m.api.patch(`/api/programs/${m.program.id}`, { fraud_rules: { self_referral: false } });
    expect(again.body.data.program.fraud_rules).toEqual({
      self_referral: false,
      disposable_email: false,
      click_flood: true,
      fast_conversion: true,
    });
  });

  it('bad settings answer 400 naming the field', async () => {
    const m = await createMerchant();
    expectError(
      await m.api.patch(`/api/programs/${m.program.id}`, { attribution_model: 'middle_click' }),
      400,
      /^attribution_model: /,
    );
    expectError(
      await m.api.patch(`/api/programs/${m.program.id}`, { commission_max_conversions: 0 }),
      400,
      /^commission_max_conversions: /,
    );
    expectError(
      await m.api.patch(`/api/programs/${m.program.id}`, {
        commission_tiers: { metric: 'customers', tiers: [{ from: 1, commission_value: 150 }] },
      }),
      400,
      /^commission_tiers\.tiers\.0\.commission_value: /,
    );
    expectError(
      await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { commission_value: 101 }),
      400,
      /^commission_value: /,
    );
  });
});

describe('attribution models', () => {
  it("last_click: a second partner's click replaces the cookie; first_click: a valid earlier cookie is kept", async () => {
    const m = await createMerchant();
    const other = await secondAffiliate(m);
    const first = await m.api.post('/api/clicks', { ref: m.slug });
    const second = await m.api.post('/api/clicks', { ref: other.slug, cookie_id: first.body.data.click.cookie_id });
    expect(second.body.data.click).toMatchObject({ kept_earlier_click: false, affiliate_id: other.affiliate.id });
    expect(second.body.data.click.cookie_id).not.toBe(first.body.data.click.cookie_id);

    await m.api.patch(`/api/programs/${m.program.id}`, { attribution_model: 'first_click' });
    const kept = await m.api.post('/api/clicks', { ref: other.slug, cookie_id: first.body.data.click.cookie_id });
    expect(kept.status).toBe(201);
    expect(kept.body.data.click).toMatchObject({
      cookie_id: first.body.data.click.cookie_id,
      kept_earlier_click: true,
      suppressed: false,
      affiliate_id: other.affiliate.id,
    });
    const customer = await m.api.post('/api/customers', {
      customer_id: uid('cus'),
      cookie_id: kept.body.data.click.cookie_id,
    });
    expect(customer.body.data.customer.affiliate_id).toBe(m.affiliate.id);
    // An unknown or foreign cookie is not kept.
    const fresh = await m.api.post('/api/clicks', { ref: other.slug, cookie_id: 'ck_notissuedbythisorganization0' });
    expect(fresh.body.data.click.kept_earlier_click).toBe(false);
  });

  it('first_click: a cookie whose click window has passed is replaced', async () => {
    const m = await createMerchant({ attribution_model: 'first_click', click_window_days: 1 });
    const other = await secondAffiliate(m);
    const old = await m.api.post('/api/clicks', {
      ref: m.slug,
      occurred_at: new Date(Date.now() - 2 * 86_400_000).toISOString(),
    });
    const next = await m.api.post('/api/clicks', { ref: other.slug, cookie_id: old.body.data.click.cookie_id });
    expect(next.body.data.click.kept_earlier_click).toBe(false);
  });
});

describe('recurring cap by count', () => {
  it('the first N paid conversions earn, the next caps the customer; exactly N under concurrent renewals', async () => {
    const m = await createMerchant({ commission_value: 10, commission_max_conversions: 3 });
    const customer = uid('cus');
    expect((await m.api.post('/api/customers', { customer_id: customer, ref: m.slug })).status).toBe(201);
    const renewals = await Promise.all(
      Array.from({ length: 12 }, () =>
        m.api.post('/api/conversions', { external_id: uid('ch'), customer_id: customer, amount: 100 }),
      ),
    );
    for (const r of renewals) expect(r.status, JSON.stringify(r.body)).toBe(201);
    const earning = renewals.filter((r) => r.body.data.conversion.commission_amount > 0);
    expect(earning).toHaveLength(3);
    for (const r of earning) expect(r.body.data.conversion.commission_amount).toBe(10);
    expect((await m.api.get(`/api/customers/${customer}`)).body.data.customer.status).toBe('capped');
    const entries = (await m.api.get(`/api/commissions?affiliate_id=${m.affiliate.id}&limit=100`)).body.data
      .commissions;
    expect(entries).toHaveLength(3);
  });

  it('a zero-amount charge does not count; with the window, whichever comes first caps', async () => {
    const m = await createMerchant({
      commission_value: 10,
      commission_max_conversions: 2,
      commission_window_months: 1,
    });
    const customer = uid('cus');
    const at = (iso: string) => ({ external_id: uid('ch'), customer_id: customer, amount: 100, occurred_at: iso });
    await m.api.post('/api/customers', { customer_id: customer, ref: m.slug });
    const zero = await m.api.post('/api/conversions', { ...at('2026-01-01T00:00:00Z'), amount: 0 });
    expect(zero.body.data.conversion.commission_amount).toBe(0);
    const one = await m.api.post('/api/conversions', at('2026-01-02T00:00:00Z'));
    expect(one.body.data.conversion.commission_amount).toBe(10);
    // Past the one-month window (from the first conversion, the zero one) before the count is reached.
    const late = await m.api.post('/api/conversions', at('2026-02-02T00:00:00Z'));
    expect(late.body.data.conversion.commission_amount).toBe(0);
    expect((await m.api.get(`/api/customers/${customer}`)).body.data.customer.status).toBe('capped');
  });

  it('a cap set later counts the paid conversions the customers already had', async () => {
    const m = await createMerchant({ commission_value: 10 });
    const customer = uid('cus');
    await m.api.post('/api/customers', { customer_id: customer, ref: m.slug });
    for (let i = 0; i < 2; i++)
      await m.api.post('/api/conversions', { external_id: uid('ch'), customer_id: customer, amount: 100 });
    await m.api.patch(`/api/programs/${m.program.id}`, { commission_max_conversions: 3 });
    const third = await m.api.post('/api/conversions', { external_id: uid('ch'), customer_id: customer, amount: 100 });
    const fourth = await m.api.post('/api/conversions', { external_id: uid('ch'), customer_id: customer, amount: 100 });
    expect([third.body.data.conversion.commission_amount, fourth.body.data.conversion.commission_amount]).toEqual([
      10, 0,
    ]);
  });
});

describe('tiers and per-affiliate rates, recorded on each entry', () => {
  it('a tier crossed mid-month pays from the next month only', async () => {
    const m = await createMerchant({
      commission_value: 20,
      commission_tiers: { metric: 'customers', tiers: [{ from: 3, commission_value: 30 }] },
    });
    const sale = (day: string, customer = uid('cus')) =>
      m.api.post('/api/conversions', {
        external_id: uid('ch'),
        customer_id: customer,
        ref: m.slug,
        amount: 100,
        occurred_at: `${day}T12:00:00Z`,
      });
    // March: the third paying customer arrives on the 15th; the rest of March still pays 20 %.
    for (const day of ['2026-03-02', '2026-03-10', '2026-03-15'])
      expect((await sale(day)).body.data.conversion.commission_amount).toBe(20);
    const lateMarch = await sale('2026-03-31');
    expect(lateMarch.body.data.conversion.commission_amount).toBe(20);
    expect((await saleEntryOf(m.api, lateMarch.body.data.conversion.id)).rate).toEqual({
      type: 'percent',
      value: 20,
      source: 'program',
    });
    // April: March had 4 paying customers, so the tier applies from April 1st, 00:00 UTC.
    const april = await sale('2026-04-01');
    expect(april.body.data.conversion.commission_amount).toBe(30);
    expect((await saleEntryOf(m.api, april.body.data.conversion.id)).rate).toEqual({
      type: 'percent',
      value: 30,
      source: 'tier',
    });
    // May: April had one customer, below the tier.
    expect((await sale('2026-05-03')).body.data.conversion.commission_amount).toBe(20);
  });

  it('a revenue tier sums the previous month in the program currency', async () => {
    const m = await createMerchant({
      commission_value: 10,
      commission_tiers: {
        metric: 'revenue',
        tiers: [
          { from: 500, commission_value: 15 },
          { from: 1000, commission_value: 25 },
        ],
      },
    });
    const sale = (amount: number, at: string, currency?: string) =>
      m.api.post('/api/conversions', { external_id: uid('ch'), ref: m.slug, amount, currency, occurred_at: at });
    await sale(600, '2026-06-10T00:00:00Z');
    await sale(900, '2026-06-11T00:00:00Z', 'EUR');
    const july = await sale(100, '2026-07-01T00:00:00Z');
    expect(july.body.data.conversion.commission_amount).toBe(15);
  });

  it("an affiliate's own rate overrides the program and its tiers; null gives the program's back", async () => {
    const m = await createMerchant({
      commission_value: 20,
      commission_tiers: { metric: 'customers', tiers: [{ from: 0, commission_value: 25 }] },
    });
    const set = await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { commission_value: 40 });
    expect(set.body.data.affiliate.commission_value).toBe(40);
    const c = await m.api.post('/api/conversions', { external_id: uid('ch'), ref: m.slug, amount: 100 });
    expect(c.body.data.conversion.commission_amount).toBe(40);
    expect((await saleEntryOf(m.api, c.body.data.conversion.id)).rate).toEqual({
      type: 'percent',
      value: 40,
      source: 'affiliate',
    });
    await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { commission_value: null });
    const d = await m.api.post('/api/conversions', { external_id: uid('ch'), ref: m.slug, amount: 100 });
    expect(d.body.data.conversion.commission_amount).toBe(25);
    expect((await saleEntryOf(m.api, d.body.data.conversion.id)).rate.source).toBe('tier');
  });
});

describe('coupons', () => {
  it('create, list by affiliate, 409 for a code taken in any case, delete', async () => {
    const m = await createMerchant();
    const created = await m.api.post('/api/coupons', { code: 'SUMMER20', affiliate_id: m.affiliate.id });
    expect(created.status).toBe(201);
    expect(created.body.data.coupon).toMatchObject({
      code: 'SUMMER20',
      affiliate_id: m.affiliate.id,
      program_id: m.program.id,
    });
    expectError(
      await m.api.post('/api/coupons', { code: 'summer20', affiliate_id: m.affiliate.id }),
      409,
      'code: "summer20" is already taken',
    );
    expectError(
      await m.api.post('/api/coupons', { code: 'X', affiliate_id: '00000000-0000-4000-8000-000000000000' }),
      404,
      'Affiliate not found',
    );
    expectError(await m.api.post('/api/coupons', { affiliate_id: m.affiliate.id }), 400, /^code: /);
    const list = await m.api.get(`/api/coupons?affiliate_id=${m.affiliate.id}`);
    expect(list.body.data.coupons.map((c: { code: string }) => c.code)).toEqual(['SUMMER20']);
    const deleted = await m.api.delete(`/api/coupons/${created.body.data.coupon.id}`);
    expect(deleted.status).toBe(200);
    expectError(
      await m.api.post('/api/conversions', { external_id: uid('ch'), amount: 10, coupon: 'SUMMER20' }),
      404,
      'No attribution found',
    );
    expect((await m.api.post('/api/coupons', { code: 'summer20', affiliate_id: m.affiliate.id })).status).toBe(201);
  });

  it('a coupon alone attributes customers and conversions to its owner, case-insensitively', async () => {
    const m = await createMerchant();
    await m.api.post('/api/coupons', { code: 'Jane10', affiliate_id: m.affiliate.id });
    const customer = await m.api.post('/api/customers', { customer_id: uid('cus'), coupon: 'JANE10' });
    expect(customer.status).toBe(201);
    expect(customer.body.data.customer).toMatchObject({ affiliate_id: m.affiliate.id, click_id: null });
    const sale = await m.api.post('/api/conversions', { external_id: uid('ch'), amount: 50, coupon: ' jane10 ' });
    expect(sale.status).toBe(201);
    expect(sale.body.data.conversion).toMatchObject({ affiliate_id: m.affiliate.id, commission_amount: 15 });
  });

  it('click beats coupon: a cookie and a coupon of different partners credit the cookie; a cookie that no longer attributes leaves it to the coupon', async () => {
    const m = await createMerchant({ click_window_days: 1 });
    const other = await secondAffiliate(m);
    await m.api.post('/api/coupons', { code: 'OTHER', affiliate_id: other.affiliate.id });
    const click = await m.api.post('/api/clicks', { ref: m.slug });
    const sale = await m.api.post('/api/conversions', {
      external_id: uid('ch'),
      amount: 10,
      cookie_id: click.body.data.click.cookie_id,
      coupon: 'OTHER',
    });
    expect(sale.body.data.conversion.affiliate_id).toBe(m.affiliate.id);
    const customer = await m.api.post('/api/customers', { customer_id: uid('cus'), ref: m.slug, coupon: 'OTHER' });
    expect(customer.body.data.customer.affiliate_id).toBe(m.affiliate.id);
    const expired = await m.api.post('/api/clicks', {
      ref: m.slug,
      occurred_at: new Date(Date.now() - 3 * 86_400_000).toISOString(),
    });
    const byCoupon = await m.api.post('/api/conversions', {
      external_id: uid('ch'),
      amount: 10,
      cookie_id: expired.body.data.click.cookie_id,
      coupon: 'other',
    });
    expect(byCoupon.body.data.conversion.affiliate_id).toBe(other.affiliate.id);
  });
});
