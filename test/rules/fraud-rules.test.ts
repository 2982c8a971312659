import { describe, expect, it } from 'vitest';
import { createMerchant, type Api } from '../support/api.js';

/**
 * Fraud signals (shared/spec/ledger.md): each rule holds the sale's commission `on_hold` with its
 * reason in the API response, approve releases it, reject rejects it; click_flood suppresses a
 * flood's surplus clicks and answers them with the address's first click.
 */

let seq = 0;
const uid = (prefix: string) =>
  `${prefix}_${Date.now().toString(36)}${(++seq).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

async function saleEntryOf(api: Api, conversionId: string) {
  const res = await api.get('/api/commissions?limit=100');
  return res.body.data.commissions.find(
    (e: { conversion_id: string; type: string }) => e.conversion_id === conversionId && e.type === 'sale',
  );
}

async function sale(api: Api, body: Record<string, unknown>) {
  const res = await api.post('/api/conversions', { external_id: uid('ch'), amount: 100, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.conversion;
}

describe('fraud rules hold commissions, each hold explained', () => {
  it("self_referral: the customer's e-mail is the affiliate's (any case): held with the reason; approve releases it", async () => {
    const m = await createMerchant();
    const customer = uid('cus');
    await m.api.post('/api/customers', { customer_id: customer, ref: m.slug, email: m.affiliate.email.toUpperCase() });
    const c = await sale(m.api, { customer_id: customer });
    const entry = await saleEntryOf(m.api, c.id);
    expect(entry.status).toBe('on_hold');
    expect(entry.hold_reasons).toEqual([
      {
        rule: 'self_referral',
        detail: `The customer's e-mail ${m.affiliate.email.toUpperCase()} is the affiliate's own`,
      },
    ]);
    const one = await m.api.get(`/api/commissions/${entry.id}`);
    expect(one.body.data.commission.hold_reasons).toHaveLength(1);
    const approved = await m.api.post(`/api/commissions/${entry.id}/approve`, {});
    expect(approved.body.data.commission).toMatchObject({
      status: 'approved',
      hold_reasons: [{ rule: 'self_referral' }],
    });
    // A renewal of the same customer is held again.
    expect((await saleEntryOf(m.api, (await sale(m.api, { customer_id: customer })).id)).status).toBe('on_hold');
  });

  it('disposable_email: a customer from a disposable domain is held; reject rejects it', async () => {
    const m = await createMerchant();
    const customer = uid('cus');
    await m.api.post('/api/customers', { customer_id: customer, ref: m.slug, email: 'someone@mailinator.com' });
    const c = await sale(m.api, { customer_id: customer });
    const entry = await saleEntryOf(m.api, c.id);
    expect(entry).toMatchObject({
      status: 'on_hold',
      hold_reasons: [
        {
          rule: 'disposable_email',
          detail: "The customer's e-mail domain mailinator.com is a disposable e-mail service",
        },
      ],
    });
    const rejected = await m.api.post(`/api/commissions/${entry.id}/reject`, { reason: 'fraud' });
    expect(rejected.body.data.commission.status).toBe('rejected');
    // An ordinary domain is not held.
    const fine = uid('cus');
    await m.api.post('/api/customers', { customer_id: fine, ref: m.slug, email: 'someone@example.org' });
    const ok = await sale(m.api, { customer_id: fine });
    expect(await saleEntryOf(m.api, ok.id)).toMatchObject({ status: 'pending', hold_reasons: [] });
  });

  it('rules turned off hold nothing', async () => {
    const m = await createMerchant({ fraud_rules: { self_referral: false, disposable_email: false } });
    const customer = uid('cus');
    await m.api.post('/api/customers', { customer_id: customer, ref: m.slug, email: m.affiliate.email });
    expect((await saleEntryOf(m.api, (await sale(m.api, { customer_id: customer })).id)).status).toBe('pending');
    const throwaway = uid('cus');
    await m.api.post('/api/customers', { customer_id: throwaway, ref: m.slug, email: 'x@mailinator.com' });
    expect((await saleEntryOf(m.api, (await sale(m.api, { customer_id: throwaway })).id)).status).toBe('pending');
  });

  it('fast_conversion (off by default): a click-attributed conversion within 10 s of its click is held', async () => {
    const m = await createMerchant();
    const click = await m.api.post('/api/clicks', { ref: m.slug });
    const quick = await sale(m.api, { cookie_id: click.body.data.click.cookie_id });
    expect((await saleEntryOf(m.api, quick.id)).status).toBe('pending');
    await m.api.patch(`/api/programs/${m.program.id}`, { fraud_rules: { fast_conversion: true } });
    const again = await m.api.post('/api/clicks', { ref: m.slug });
    const fast = await sale(m.api, { cookie_id: again.body.data.click.cookie_id });
    const entry = await saleEntryOf(m.api, fast.id);
    expect(entry.status).toBe('on_hold');
    expect(entry.hold_reasons).toEqual([
      {
        rule: 'fast_conversion',
        detail: expect.stringMatching(/^Converted \d+\.\d s after its click \(at most 10 s\)$/),
      },
    ]);
    const old = await m.api.post('/api/clicks', {
      ref: m.slug,
      occurred_at: new Date(Date.now() - 60_000).toISOString(),
    });
    const slow = await sale(m.api, { cookie_id: old.body.data.click.cookie_id });
    expect((await saleEntryOf(m.api, slow.id)).status).toBe('pending');
    // A slug is no click: nothing to measure.
    expect((await saleEntryOf(m.api, (await sale(m.api, { ref: m.slug })).id)).status).toBe('pending');
  });

  it('several rules firing are all listed', async () => {
    const m = await createMerchant({ fraud_rules: { fast_conversion: true } });
    const click = await m.api.post('/api/clicks', { ref: m.slug });
    const customer = uid('cus');
    await m.api.post('/api/customers', {
      customer_id: customer,
      cookie_id: click.body.data.click.cookie_id,
      email: 'bot@mailinator.com',
    });
    const c = await sale(m.api, { customer_id: customer });
    expect((await saleEntryOf(m.api, c.id)).hold_reasons.map((r: { rule: string }) => r.rule)).toEqual([
      'disposable_email',
      'fast_conversion',
    ]);
  });
});

describe('click_flood', () => {
  it('more than 10 clicks within 60 s from one address on one link: the surplus is suppressed, answered with the first click, counted nowhere', async () => {
    const m = await createMerchant();
    const ip = `203.0.113.${Math.floor(Math.random() * 200) + 1}`;
    const clicks = [];
    for (let i = 0; i < 13; i++) clicks.push((await m.api.post('/api/clicks', { ref: m.slug, ip })).body.data.click);
    expect(clicks.slice(0, 10).every((c) => !c.suppressed && !c.kept_earlier_click)).toBe(true);
    for (const c of clicks.slice(10))
      expect(c).toMatchObject({ suppressed: true, kept_earlier_click: true, cookie_id: clicks[0].cookie_id });
    // Another address, or the rule off, is not affected.
    expect((await m.api.post('/api/clicks', { ref: m.slug, ip: '198.51.100.7' })).body.data.click.suppressed).toBe(
      false,
    );
    // The answered cookie attributes (to the first click).
    const customer = await m.api.post('/api/customers', { customer_id: uid('cus'), cookie_id: clicks[12].cookie_id });
    expect(customer.body.data.customer.click_id).toBe(clicks[0].id);
    // A suppressed click's own id attributes nothing.
    expect((await m.api.post('/api/customers', { customer_id: uid('cus'), click_id: clicks[12].id })).status).toBe(404);
    const report = await m.api.get(
      `/api/reports/affiliates?program_id=${m.program.id}&from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`,
    );
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    expect(report.body.data.affiliates[0].clicks).toBe(11);

    await m.api.patch(`/api/programs/${m.program.id}`, { fraud_rules: { click_flood: false } });
    expect((await m.api.post('/api/clicks', { ref: m.slug, ip })).body.data.click.suppressed).toBe(false);
  });

  it('a click without an address is never a flood', async () => {
    const m = await createMerchant();
    for (let i = 0; i < 12; i++)
      expect((await m.api.post('/api/clicks', { ref: m.slug })).body.data.click.suppressed).toBe(false);
  });
});
