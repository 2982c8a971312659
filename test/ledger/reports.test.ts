import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMerchant, expectError } from '../support/api.js';

const FROM = '2026-01-01T00:00:00Z';

describe('GET /api/reports/affiliates', () => {
  it('one row per affiliate and currency, by revenue; clicks and signups in the program currency; commissions by status', async () => {
    const m = await createMerchant({ currency: 'EUR' });
    const b = (
      await m.api.post('/api/affiliates', { email: `b-${randomUUID()}@example.com`, program_id: m.program.id })
    ).body.data.affiliate;
    const click = (await m.api.post('/api/clicks', { ref: m.slug })).body.data.click;
    await m.api.post('/api/customers', { customer_id: `c-${randomUUID()}`, cookie_id: click.cookie_id });
    const sale = (
      await m.api.post('/api/conversions', { external_id: `o-${randomUUID()}`, amount: 80, cookie_id: click.cookie_id })
    ).body.data.conversion;
    await m.api.post(`/api/conversions/${sale.id}/refund`, { amount: 20 });
    await m.api.post('/api/conversions', {
      external_id: `o-${randomUUID()}`,
      amount: 100,
      currency: 'USD',
      ref: m.slug,
    });
    await m.api.post('/api/conversions', { external_id: `o-${randomUUID()}`, amount: 30, ref: b.slug });
    const bonus = (await m.api.post('/api/commissions', { affiliate_id: b.id, amount: 7.5, description: 'bonus' })).body
      .data.commission;
    await m.api.post(`/api/commissions/${bonus.id}/reject`, {});
    await m.api.post('/api/commissions', { affiliate_id: b.id, amount: 2.25, description: 'bonus' });

    const to = new Date(Date.now() + 3_600_000).toISOString();
    const res = await m.api.get(`/api/reports/affiliates?from=${FROM}&to=${to}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Each sale's entry is pending (30 days' hold): 30 % of 100; of 80 refunded down to 60; of 30.
    const zero = { paid: 0, reversed: 0, on_hold: 0 };
    expect(res.body.data).toEqual({
      affiliates: [
        {
          affiliate_id: m.affiliate.id,
          program_id: m.program.id,
          currency: 'USD',
          clicks: 0,
          customers: 0,
          conversions: 1,
          revenue: 100,
          refunded: 0,
          net_revenue: 100,
          commissions: { ...zero, pending: 30, approved: 0, rejected: 0, earned: 30 },
          livemode: true,
        },
        {
          affiliate_id: m.affiliate.id,
          program_id: m.program.id,
          currency: 'EUR',
          clicks: 1,
          customers: 1,
          conversions: 1,
          revenue: 80,
          refunded: 20,
          net_revenue: 60,
          commissions: { ...zero, pending: 18, approved: 0, rejected: 0, earned: 18 },
          livemode: true,
        },
        {
          affiliate_id: b.id,
          program_id: m.program.id,
          currency: 'EUR',
          clicks: 0,
          customers: 0,
          conversions: 1,
          revenue: 30,
          refunded: 0,
          net_revenue: 30,
          commissions: { ...zero, pending: 9, approved: 2.25, rejected: 7.5, earned: 11.25 },
          livemode: true,
        },
      ],
      next_cursor: null,
    });
    const usd = await m.api.get(`/api/reports/affiliates?from=${FROM}&to=${to}&currency=usd`);
    expect(usd.body.data.affiliates.map((r: { currency: string }) => r.currency)).toEqual(['USD']);
    // Narrowed to some affiliates (a page of the affiliates list): theirs only, ranked the same.
    const onlyB = await m.api.get(`/api/reports/affiliates?from=${FROM}&to=${to}&affiliate_id=${b.id}`);
    expect(onlyB.body.data).toEqual({ affiliates: [res.body.data.affiliates[2]], next_cursor: null });
    const both = await m.api.get(
      `/api/reports/affiliates?from=${FROM}&to=${to}&affiliate_id=${b.id},${m.affiliate.id.toUpperCase()},${randomUUID()}`,
    );
    expect(both.body.data).toEqual(res.body.data);
    const before = await m.api.get(
      `/api/reports/affiliates?from=2024-01-01T00:00:00Z&to=${FROM}&program_id=${m.program.id}`,
    );
    expect(before.body.data).toEqual({ affiliates: [], next_cursor: null });
  });

  it('refuses a reversed or too long period, a bad cursor, an unknown or foreign program', async () => {
    const m = await createMerchant();
    const other = await createMerchant();
    expectError(
      await m.api.get(`/api/reports/affiliates?from=${FROM}&to=2025-12-31T00:00:00Z`),
      400,
      'to: must be after from',
    );
    expectError(await m.api.get(`/api/reports/affiliates?from=${FROM}&to=${FROM}`), 400, 'to: must be after from');
    expectError(
      await m.api.get(`/api/reports/affiliates?from=2020-01-01T00:00:00Z&to=2023-01-02T00:00:00Z`),
      400,
      'to: a report covers at most 3 years (1096 days) from from',
    );
    expect((await m.api.get(`/api/reports/affiliates?from=2020-01-01T00:00:00Z&to=2023-01-01T00:00:00Z`)).status).toBe(
      200,
    );
    expectError(await m.api.get(`/api/reports/affiliates?to=${FROM}`), 400, /^from: /);
    expectError(await m.api.get(`/api/reports/affiliates?from=yesterday&to=${FROM}`), 400, /^from: /);
    expectError(
      await m.api.get(`/api/reports/affiliates?from=2025-01-01T00:00:00Z&to=${FROM}&cursor=abc`),
      400,
      'cursor: Invalid cursor',
    );
    expectError(
      await m.api.get(`/api/reports/affiliates?from=2025-01-01T00:00:00Z&to=${FROM}&affiliate_id=jane`),
      400,
      /^affiliate_id: Expected 1 to 100 affiliate ids/,
    );
    const tooMany = Array.from({ length: 101 }, () => randomUUID()).join(',');
    expectError(
      await m.api.get(`/api/reports/affiliates?from=2025-01-01T00:00:00Z&to=${FROM}&affiliate_id=${tooMany}`),
      400,
      /^affiliate_id: /,
    );
    expectError(
      await m.api.get(`/api/reports/affiliates?from=2025-01-01T00:00:00Z&to=${FROM}&affiliate_id=${randomUUID()},`),
      400,
      /^affiliate_id: /,
    );
    expectError(
      await m.api.get(`/api/reports/affiliates?from=2025-01-01T00:00:00Z&to=${FROM}&program_id=${randomUUID()}`),
      404,
      'Program not found',
    );
    expectError(
      await m.api.get(`/api/reports/affiliates?from=2025-01-01T00:00:00Z&to=${FROM}&program_id=${other.program.id}`),
      404,
      'Program not found',
    );
    expectError(
      await m.api.get(`/api/reports/timeseries?from=2025-01-01T00:00:00Z&to=${FROM}&interval=year`),
      400,
      /^interval: /,
    );
  });

  it('another organization never sees these figures', async () => {
    const m = await createMerchant();
    await m.api.post('/api/conversions', { external_id: `o-${randomUUID()}`, amount: 50, ref: m.slug });
    const other = await createMerchant();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    expect((await other.api.get(`/api/reports/affiliates?from=${FROM}&to=${to}`)).body.data.affiliates).toEqual([]);
    expect(
      (await other.api.get(`/api/reports/affiliates?from=${FROM}&to=${to}&affiliate_id=${m.affiliate.id}`)).body.data
        .affiliates,
    ).toEqual([]);
    const series = (await other.api.get(`/api/reports/timeseries?from=${FROM}&to=${to}&interval=month`)).body.data
      .points as { revenue: number }[];
    expect(series.every((p) => p.revenue === 0)).toBe(true);
  });
});

describe('GET /api/reports/timeseries', () => {
  it('every period of the interval, UTC, weeks from Monday, empty ones as zeros in the program currency', async () => {
    const m = await createMerchant({ currency: 'GBP' });
    await m.api.post('/api/conversions', {
      external_id: `o-${randomUUID()}`,
      amount: 12.5,
      ref: m.slug,
      occurred_at: '2026-03-04T23:30:00Z',
    });
    await m.api.post('/api/conversions', {
      external_id: `o-${randomUUID()}`,
      amount: 7.5,
      ref: m.slug,
      occurred_at: '2026-03-11T00:30:00Z',
    });
    const weeks = await m.api.get(
      `/api/reports/timeseries?from=2026-03-01T00:00:00Z&to=2026-03-20T00:00:00Z&interval=week&program_id=${m.program.id}`,
    );
    expect(weeks.status, JSON.stringify(weeks.body)).toBe(200);
    expect(weeks.body.data.interval).toBe('week');
    expect(
      weeks.body.data.points.map((p: { period: string; revenue: number; currency: string }) => [
        p.period,
        p.currency,
        p.revenue,
      ]),
    ).toEqual([
      ['2026-02-23T00:00:00.000Z', 'GBP', 0],
      ['2026-03-02T00:00:00.000Z', 'GBP', 12.5],
      ['2026-03-09T00:00:00.000Z', 'GBP', 7.5],
      ['2026-03-16T00:00:00.000Z', 'GBP', 0],
    ]);
    const days = await m.api.get(`/api/reports/timeseries?from=2026-03-04T12:00:00Z&to=2026-03-06T00:00:00Z`);
    expect(days.body.data.interval).toBe('day');
    expect(
      days.body.data.points.map((p: { period: string; conversions: number }) => [p.period, p.conversions]),
    ).toEqual([
      ['2026-03-04T00:00:00.000Z', 1],
      ['2026-03-05T00:00:00.000Z', 0],
    ]);
    const months = await m.api.get(
      `/api/reports/timeseries?from=2026-01-15T00:00:00Z&to=2026-04-01T00:00:00Z&interval=month&currency=GBP`,
    );
    expect(months.body.data.points.map((p: { period: string; revenue: number }) => [p.period, p.revenue])).toEqual([
      ['2026-01-01T00:00:00.000Z', 0],
      ['2026-02-01T00:00:00.000Z', 0],
      ['2026-03-01T00:00:00.000Z', 20],
    ]);
  });

  it('totals per currency over the whole period, computed by the service: gross revenue, refunds, net revenue, commissions by status', async () => {
    const m = await createMerchant({ currency: 'USD' });
    // Amounts whose float sum is not exact (0.1 + 0.2): the totals are exact all the same.
    const a = (
      await m.api.post('/api/conversions', {
        external_id: `o-${randomUUID()}`,
        amount: 0.1,
        ref: m.slug,
        occurred_at: '2026-03-02T10:00:00Z',
      })
    ).body.data.conversion;
    await m.api.post('/api/conversions', {
      external_id: `o-${randomUUID()}`,
      amount: 0.2,
      ref: m.slug,
      occurred_at: '2026-03-09T10:00:00Z',
    });
    await m.api.post('/api/conversions', {
      external_id: `o-${randomUUID()}`,
      amount: 100,
      ref: m.slug,
      occurred_at: '2026-03-10T10:00:00Z',
    });
    await m.api.post('/api/conversions', {
      external_id: `o-${randomUUID()}`,
      amount: 40,
      currency: 'EUR',
      ref: m.slug,
      occurred_at: '2026-03-10T10:00:00Z',
    });
    await m.api.post(`/api/conversions/${a.id}/refund`, {});
    const res = await m.api.get(
      `/api/reports/timeseries?from=2026-03-01T00:00:00Z&to=2026-03-20T00:00:00Z&interval=week`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const usd = res.body.data.totals.find((t: { currency: string }) => t.currency === 'USD');
    expect(usd).toMatchObject({ currency: 'USD', conversions: 3, revenue: 100.3, refunded: 0.1, net_revenue: 100.2 });
    // Past their 30 days' hold: approved; the refunded sale's entry reversed.
    expect(usd.commissions).toMatchObject({ approved: 30.06, reversed: 0.03, pending: 0 });
    expect(res.body.data.totals.find((t: { currency: string }) => t.currency === 'EUR')).toMatchObject({
      conversions: 1,
      revenue: 40,
      refunded: 0,
      net_revenue: 40,
    });
    expect(res.body.data.totals).toHaveLength(2);
    const week = res.body.data.points.find(
      (p: { period: string; currency: string }) => p.period === '2026-03-09T00:00:00.000Z' && p.currency === 'USD',
    );
    expect(week).toMatchObject({ revenue: 100.2, refunded: 0, net_revenue: 100.2 });
  });
});
