import { beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, createOrganization, expectError, request } from '../support/api.js';

describe('PUT/GET/DELETE /api/integrations', () => {
  it('stores a secret per provider, never returns it, lists the five payment providers and the three payout rails', async () => {
    const org = await createOrganization();
    const put = await org.api.put('/api/integrations/stripe', { signing_secret: 'whsec_abcdefgh12345678' });
    expect(put.status).toBe(200);
    expect(put.body.data.integration).toEqual({
      provider: 'stripe',
      kind: 'payment_provider',
      configured: true,
      webhook_path: `/webhooks/stripe/${org.id}`,
      updated_at: expect.any(String),
      livemode: true,
    });
    expect(JSON.stringify(put.body)).not.toContain('whsec_abcdefgh12345678');
    const list = await org.api.get('/api/integrations');
    expect(list.status).toBe(200);
    expect(list.body.data.integrations.map((i: any) => [i.provider, i.configured])).toEqual([
      ['stripe', true],
      ['paddle', false],
      ['lemonsqueezy', false],
      ['polar', false],
      ['chargebee', false],
      ['paypal_payouts', false],
      ['stripe_connect', false],
      ['wise', false],
    ]);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    const del = await request('DELETE', '/api/integrations/stripe', { key: org.key });
    expect(del.status).toBe(200);
    expect(del.body.data.integration.configured).toBe(false);
  });

  it('404 for an unknown provider, 400 for a missing or short secret, 401 without a key', async () => {
    const org = await createOrganization();
    expectError(
      await org.api.put('/api/integrations/paypal', { signing_secret: 'whsec_abcdefgh12345678' }),
      404,
      /Unknown provider/,
    );
    expectError(await org.api.put('/api/integrations/stripe', {}), 400, /signing_secret/);
    expectError(await org.api.put('/api/integrations/stripe', { signing_secret: 'short' }), 400, /signing_secret/);
    expectError(
      await request('PUT', '/api/integrations/stripe', { body: { signing_secret: 'whsec_abcdefgh12345678' } }),
      401,
    );
  });
});

describe('POST /api/conversions/{id}/refund', () => {
  let m: Awaited<ReturnType<typeof createMerchant>>;
  beforeAll(async () => {
    m = await createMerchant();
  });

  const sale = async (amount = 100) => {
    const res = await m.api.post('/api/conversions', {
      external_id: `ord_${Math.random().toString(36).slice(2)}`,
      amount,
      ref: m.slug,
    });
    expect(res.status).toBe(201);
    expect(res.body.data.conversion).toMatchObject({
      status: 'approved',
      refunded_amount: 0,
      reversed_at: null,
      commission_amount: amount * 0.3,
    });
    return res.body.data.conversion;
  };

  it('a full refund reverses the commission; repeating it changes nothing (deduped)', async () => {
    const c = await sale();
    const r1 = await m.api.post(`/api/conversions/${c.external_id}/refund`, {});
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({
      success: true,
      deduped: false,
      data: { conversion: { id: c.id, status: 'reversed', commission_amount: 0, refunded_amount: 100 } },
    });
    const r2 = await m.api.post(`/api/conversions/${c.id}/refund`, {});
    expect(r2.body.deduped).toBe(true);
    expect(r2.body.data.conversion).toEqual(r1.body.data.conversion);
  });

  it('partial refunds: by refund_id they add up, each counted once; without it the amount is the running total', async () => {
    const c = await sale(100);
    const a = await m.api.post(`/api/conversions/${c.id}/refund`, { amount: 10, refund_id: 're_1' });
    expect(a.body.data.conversion).toMatchObject({ status: 'approved', refunded_amount: 10, commission_amount: 27 });
    expect((await m.api.post(`/api/conversions/${c.id}/refund`, { amount: 10, refund_id: 're_1' })).body.deduped).toBe(
      true,
    );
    const b = await m.api.post(`/api/conversions/${c.id}/refund`, { amount: 15, refund_id: 're_2' });
    expect(b.body.data.conversion).toMatchObject({ refunded_amount: 25, commission_amount: 22.5 });
    const c2 = await sale(100);
    await m.api.post(`/api/conversions/${c2.id}/refund`, { amount: 40 });
    const again = await m.api.post(`/api/conversions/${c2.id}/refund`, { amount: 40 });
    expect(again.body.deduped).toBe(true);
    expect(again.body.data.conversion).toMatchObject({ refunded_amount: 40, commission_amount: 18 });
  });

  it('400 above the amount or negative, 404 unknown, 403 for another organization', async () => {
    const c = await sale(50);
    expectError(await m.api.post(`/api/conversions/${c.id}/refund`, { amount: 50.01 }), 400, /amount/);
    expectError(await m.api.post(`/api/conversions/${c.id}/refund`, { amount: -1 }), 400, /amount/);
    expectError(await m.api.post('/api/conversions/nope-never-recorded/refund', {}), 404);
    const other = await createOrganization();
    expectError(await other.api.post(`/api/conversions/${c.id}/refund`, {}), 403);
  });
});
