import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMerchant, expectError, request } from '../support/api.js';

/**
 * Inputs a careless or hostile client sends that once broke a record or the service: each is
 * refused with a clear 4xx, and nothing is stored.
 */

const BROWSER_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

const cursorOf = (at: string) => Buffer.from(JSON.stringify([at, randomUUID()])).toString('base64url');

describe('occurred_at: from 2000-01-01 to 5 minutes from now', () => {
  it('years 0000-0099 and before 2000 are refused with 400 on clicks and conversions; nothing is stored', async () => {
    const m = await createMerchant();
    for (const at of [
      '0000-01-01T00:00:00Z',
      '0001-01-01T00:00:00Z',
      '0050-06-01T12:00:00Z',
      '0099-12-31T23:59:59Z',
      '1999-12-31T23:59:59Z',
    ]) {
      expectError(
        await m.api.post('/api/clicks', { ref: m.slug, occurred_at: at }),
        400,
        'occurred_at: must not be before 2000-01-01T00:00:00Z',
      );
      expectError(
        await m.api.post('/api/conversions', { external_id: `old-${at}`, amount: 10, ref: m.slug, occurred_at: at }),
        400,
        'occurred_at: must not be before 2000-01-01T00:00:00Z',
      );
    }
    const list = await m.api.get('/api/conversions');
    expect(list.body.data.conversions).toEqual([]);
  });

  it('the first instant of 2000 is accepted and read back unchanged; a customer charged then keeps converting', async () => {
    const m = await createMerchant({ commission_window_months: null });
    const click = await m.api.post('/api/clicks', { ref: m.slug, occurred_at: '2000-01-01T00:00:00Z' });
    expect(click.status).toBe(201);
    expect(click.body.data.click.occurred_at).toBe('2000-01-01T00:00:00.000Z');
    const first = await m.api.post('/api/conversions', {
      external_id: 'y2k',
      amount: 10,
      ref: m.slug,
      customer_id: 'cus_y2k',
      occurred_at: '2000-01-01T00:00:00Z',
    });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect((await m.api.get('/api/conversions/y2k')).body.data.conversion.occurred_at).toBe('2000-01-01T00:00:00.000Z');
    const renewal = await m.api.post('/api/conversions', {
      external_id: 'y2k-renewal',
      amount: 10,
      customer_id: 'cus_y2k',
    });
    expect(renewal.status, JSON.stringify(renewal.body)).toBe(201);
  });
});

describe('pagination cursors', () => {
  it('a crafted cursor with an out-of-range or non-canonical date is 400 on every list, never 500', async () => {
    const m = await createMerchant();
    const crafted = [
      cursorOf('-271821-04-20T00:00:00.000Z'),
      cursorOf('+275760-09-13T00:00:00.000Z'),
      cursorOf('0000-01-01T00:00:00.000Z'),
      cursorOf('2026-01-01'),
      Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 'not-a-uuid'])).toString('base64url'),
    ];
    for (const cursor of crafted) {
      for (const path of ['/api/programs', '/api/affiliates', '/api/conversions']) {
        expectError(await m.api.get(`${path}?cursor=${cursor}`), 400, 'cursor: Invalid cursor');
      }
    }
  });
});

describe('the public snippet endpoint does not reveal which customers exist', () => {
  it('an invalid cookie answers the same 404 for an existing and an unknown customer id', async () => {
    const m = await createMerchant();
    const click = await m.api.post('/api/clicks', { ref: m.slug });
    expect(
      (await m.api.post('/api/customers', { customer_id: 'cus_known', cookie_id: click.body.data.click.cookie_id }))
        .status,
    ).toBe(201);
    const probe = (customerId: string) =>
      request('POST', `/public/organizations/${m.id}/customers`, {
        body: { customerId, cookieId: 'ck_made_up_by_a_stranger' },
      });
    const known = await probe('cus_known');
    const unknown = await probe('cus_unknown');
    expectError(known, 404, 'No attribution found');
    expect(known.body).toEqual(unknown.body);
  });

  it('the browser that was referred still gets its idempotent repeat', async () => {
    const m = await createMerchant();
    const click = await request('POST', `/public/organizations/${m.id}/clicks`, {
      body: { ref: m.slug },
      headers: { 'user-agent': BROWSER_USER_AGENT },
    });
    const cookieId = click.body.data.click.cookie_id;
    const body = { customerId: 'cus_snippet', cookieId };
    expect((await request('POST', `/public/organizations/${m.id}/customers`, { body })).status).toBe(201);
    const repeat = await request('POST', `/public/organizations/${m.id}/customers`, { body });
    expect(repeat.status).toBe(200);
    expect(repeat.body.deduped).toBe(true);
  });
});

describe('ownership is decided in one statement', () => {
  it('a GET by merchant id racing its own creation answers 200 or 404, never 403', async () => {
    const m = await createMerchant();
    const statuses = new Map<number, number>();
    for (let round = 0; round < 20; round++) {
      await Promise.all(
        Array.from({ length: 15 }, async (_, i) => {
          const externalId = `race-${round}-${i}`;
          const customerId = `cus-race-${round}-${i}`;
          const [, conversionGet, , customerGet] = await Promise.all([
            m.api.post('/api/conversions', { external_id: externalId, amount: 10, ref: m.slug }),
            m.api.get(`/api/conversions/${externalId}`),
            m.api.post('/api/customers', { customer_id: customerId, ref: m.slug }),
            m.api.get(`/api/customers/${customerId}`),
          ]);
          for (const res of [conversionGet, customerGet]) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }),
      );
    }
    expect(
      [...statuses.keys()].filter((s) => s !== 200 && s !== 404),
      JSON.stringify([...statuses]),
    ).toEqual([]);
  });
});

describe('money edges', () => {
  it('refunds with different refund_ids that would total more than the amount are refused with 409, also when sent at once', async () => {
    const m = await createMerchant();
    const sale = await m.api.post('/api/conversions', { external_id: 'sale-100', amount: 100, ref: m.slug });
    expect(sale.body.data.conversion.commission_amount).toBe(30);
    const refunds = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        m.api.post('/api/conversions/sale-100/refund', { amount: 60, refund_id: `re_${i}` }),
      ),
    );
    expect(refunds.filter((r) => r.status === 200)).toHaveLength(1);
    for (const refused of refunds.filter((r) => r.status !== 200)) {
      expectError(
        refused,
        409,
        /^amount: refunds would total 120, more than the conversion amount \(100\); 60 was already refunded/,
      );
    }
    const rest = await m.api.post('/api/conversions/sale-100/refund', { amount: 40, refund_id: 're_last' });
    expect(rest.status).toBe(200);
    expect(rest.body.data.conversion).toMatchObject({ refunded_amount: 100, commission_amount: 0, status: 'reversed' });
    expectError(await m.api.post('/api/conversions/sale-100/refund', { amount: 0.01, refund_id: 're_more' }), 409);
  });

  it('a refund without refund_id states the running total: after a partial refund by id, a full one still reverses', async () => {
    const m = await createMerchant();
    await m.api.post('/api/conversions', { external_id: 'sale-total', amount: 100, ref: m.slug });
    expect((await m.api.post('/api/conversions/sale-total/refund', { amount: 60, refund_id: 're_1' })).status).toBe(
      200,
    );
    const full = await request('POST', '/api/conversions/sale-total/refund', { key: m.key });
    expect(full.status, JSON.stringify(full.body)).toBe(200);
    expect(full.body.data.conversion).toMatchObject({ refunded_amount: 100, commission_amount: 0, status: 'reversed' });
  });

  it("amounts finer than the currency's minor unit are refused: 0.005 USD, 0.5 JPY, 0.0005 BHD", async () => {
    const m = await createMerchant();
    expectError(
      await m.api.post('/api/conversions', { external_id: 'usd-fine', amount: 0.005, ref: m.slug }),
      400,
      'amount: USD amounts have at most 2 decimals',
    );
    expectError(
      await m.api.post('/api/conversions', { external_id: 'jpy-fine', amount: 0.5, currency: 'JPY', ref: m.slug }),
      400,
      'amount: JPY amounts have at most 0 decimals',
    );
    expectError(
      await m.api.post('/api/conversions', { external_id: 'bhd-fine', amount: 1.0005, currency: 'BHD', ref: m.slug }),
      400,
      'amount: BHD amounts have at most 3 decimals',
    );
    // Refused before anything is written: not even the customer a first sale would create.
    expectError(
      await m.api.post('/api/conversions', {
        external_id: 'new-customer-fine',
        amount: 0.005,
        ref: m.slug,
        customer_id: 'cus_refused',
      }),
      400,
      'amount: USD amounts have at most 2 decimals',
    );
    expectError(await m.api.get('/api/customers/cus_refused'), 404);
    const jpy = await m.api.post('/api/conversions', {
      external_id: 'jpy-ok',
      amount: 1001,
      currency: 'jpy',
      ref: m.slug,
    });
    expect(jpy.status).toBe(201);
    expect(jpy.body.data.conversion).toMatchObject({ currency: 'JPY', commission_amount: 300 });
    const bhd = await m.api.post('/api/conversions', {
      external_id: 'bhd-ok',
      amount: 10.005,
      currency: 'BHD',
      ref: m.slug,
    });
    expect(bhd.body.data.conversion.commission_amount).toBe(3.002);
    expectError(
      await m.api.post('/api/conversions/jpy-ok/refund', { amount: 0.5 }),
      400,
      'amount: JPY amounts have at most 0 decimals',
    );
    const partial = await m.api.post('/api/conversions/jpy-ok/refund', { amount: 1 });
    expect(partial.body.data.conversion.commission_amount).toBe(300);
    const list = await m.api.get('/api/conversions');
    expect(list.body.data.conversions.map((c: { external_id: string }) => c.external_id).sort()).toEqual([
      'bhd-ok',
      'jpy-ok',
    ]);
  });

  it('a percent commission is at most 100, so no commission exceeds what a JSON number carries exactly', async () => {
    const m = await createMerchant();
    expectError(
      await m.api.post('/api/programs', { name: 'Too generous', commission_value: 100.01 }),
      400,
      'commission_value: a percent commission is at most 100',
    );
    const flat = await m.api.post('/api/programs', { name: 'Flat', commission_type: 'flat', commission_value: 500 });
    expect(flat.status).toBe(201);
    expectError(
      await m.api.patch(`/api/programs/${flat.body.data.program.id}`, { commission_type: 'percent' }),
      400,
      'commission_value: a percent commission is at most 100',
    );
    expect((await m.api.get(`/api/programs/${flat.body.data.program.id}`)).body.data.program.commission_type).toBe(
      'flat',
    );
    const full = await m.api.patch(`/api/programs/${m.program.id}`, { commission_value: 100 });
    expect(full.status).toBe(200);
    const biggest = await m.api.post('/api/conversions', {
      external_id: 'max',
      amount: 999_999_999_999.99,
      ref: m.slug,
    });
    expect(biggest.status, JSON.stringify(biggest.body)).toBe(201);
    expect(Number.isSafeInteger(Math.round(biggest.body.data.conversion.commission_amount * 100))).toBe(true);
    expect(biggest.body.data.conversion.commission_amount).toBe(999_999_999_999.99);
  });
});
