import { describe, expect, it } from 'vitest';
import { NotFoundError, ValidationError } from '../../client-sdk/src/index.js';
import { rejection } from '../support/rejection.js';
import { sdkMerchant, uniqueId } from './support.js';

describe('SDK against the live server: reports', () => {
  it('client.reports.affiliates pages with for await; client.reports.timeseries answers points', async () => {
    const { client, program, affiliate, slug } = await sdkMerchant();
    const others = [];
    for (let i = 0; i < 2; i++)
      others.push(
        (await client.affiliates.create({ email: `${uniqueId('b')}@example.com`, program_id: program.id })).affiliate,
      );
    await client.clicks.create({ ref: slug });
    await client.conversions.create({ external_id: uniqueId('o'), amount: 100, ref: slug });
    await client.conversions.create({ external_id: uniqueId('o'), amount: 10, ref: others[0].slug });
    await client.commissions.adjust({ affiliate_id: others[1].id, amount: 5, description: 'bonus' });

    const from = new Date(Date.now() - 86_400_000).toISOString();
    const to = new Date(Date.now() + 86_400_000).toISOString();
    const rows = [];
    for await (const row of client.reports.affiliates({ from, to, limit: 1 })) rows.push(row);
    expect(rows.map((r) => r.affiliate_id)).toEqual([affiliate.id, others[0].id, others[1].id]);
    expect(rows[0]).toMatchObject({
      clicks: 1,
      conversions: 1,
      revenue: 100,
      refunded: 0,
      currency: 'USD',
      program_id: program.id,
    });
    expect(rows[2].commissions).toMatchObject({ approved: 5 });

    const page = await client.reports.affiliates({ from, to, program_id: program.id });
    expect(page.data).toHaveLength(3);
    expect(page.hasNextPage()).toBe(false);

    const { interval, points } = await client.reports.timeseries({ from, to, interval: 'day' });
    expect(interval).toBe('day');
    expect(points.length).toBeGreaterThanOrEqual(2);
    expect(points.reduce((sum, p) => sum + p.revenue, 0)).toBe(110);
    expect(points.reduce((sum, p) => sum + p.clicks, 0)).toBe(1);
  });

  it('a bad period is a ValidationError, an unknown program a NotFoundError', async () => {
    const { client } = await sdkMerchant();
    const from = '2026-01-01T00:00:00Z';
    expect(await rejection(client.reports.affiliates({ from, to: '2025-01-01T00:00:00Z' }))).toBeInstanceOf(
      ValidationError,
    );
    expect(await rejection(client.reports.timeseries({ from, to: '2030-01-02T00:00:00Z' }))).toBeInstanceOf(
      ValidationError,
    );
    expect(
      await rejection(
        client.reports.timeseries({
          from,
          to: '2026-02-01T00:00:00Z',
          program_id: '00000000-0000-4000-8000-000000000000',
        }),
      ),
    ).toBeInstanceOf(NotFoundError);
  });
});
