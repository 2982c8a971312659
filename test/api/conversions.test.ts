import { describe, expect, it } from 'vitest';
import { createMerchant, createOrganization, expectError } from '../support/api.js';

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
const monthsAgo = (n: number) => {
  const d = new Date();
  d.setUTCMonth(d.getUTCMonth() - n);
  return d.toISOString();
};

async function merchantWithClick(program: Record<string, unknown> = {}) {
  const m = await createMerchant(program);
  const click = (await m.api.post('/api/clicks', { ref: m.slug })).body.data.click;
  return { ...m, click };
}

describe('POST /api/conversions: attribution by click', () => {
  it('a click-attributed sale is initial, with the commission computed (201, deduped false)', async () => {
    const m = await merchantWithClick({ commission_value: 30 });
    const res = await m.api.post('/api/conversions', {
      external_id: 'ord_1',
      amount: 49.99,
      cookie_id: m.click.cookie_id,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      deduped: false,
      data: {
        conversion: {
          id: expect.any(String),
          external_id: 'ord_1',
          amount: 49.99,
          currency: 'USD',
          kind: 'initial',
          commission_amount: 15,
          status: 'approved',
          refunded_amount: 0,
          reversed_at: null,
          customer_id: null,
          affiliate_id: m.affiliate.id,
          program_id: m.program.id,
          click_id: m.click.id,
          occurred_at: expect.any(String),
          created_at: expect.any(String),
          livemode: true,
        },
      },
    });
  });

  it('accepts click_id, ref and a raw slug in cookie_id', async () => {
    const m = await merchantWithClick();
    expect(
      (await m.api.post('/api/conversions', { external_id: 'a', amount: 10, click_id: m.click.id })).body.data
        .conversion.click_id,
    ).toBe(m.click.id);
    const byRef = await m.api.post('/api/conversions', { external_id: 'b', amount: 10, ref: m.slug });
    expect(byRef.body.data.conversion).toMatchObject({ affiliate_id: m.affiliate.id, click_id: null, kind: 'initial' });
    const bySlug = await m.api.post('/api/conversions', { external_id: 'c', amount: 10, cookie_id: m.slug });
    expect(bySlug.status).toBe(201);
    expect(bySlug.body.data.conversion.affiliate_id).toBe(m.affiliate.id);
  });

  it('410 when the click is older than the click window at occurred_at; slugs have no window', async () => {
    const m = await createMerchant({ click_window_days: 7 });
    const old = (await m.api.post('/api/clicks', { ref: m.slug, occurred_at: daysAgo(8) })).body.data.click;
    expectError(
      await m.api.post('/api/conversions', { external_id: 'late', amount: 5, cookie_id: old.cookie_id }),
      410,
    );
    // measured at occurred_at: a backdated sale inside the window still attributes
    const backdated = await m.api.post('/api/conversions', {
      external_id: 'import',
      amount: 5,
      cookie_id: old.cookie_id,
      occurred_at: daysAgo(2),
    });
    expect(backdated.status).toBe(201);
    expect((await m.api.post('/api/conversions', { external_id: 'slug', amount: 5, ref: m.slug })).status).toBe(201);
  });

  it('404 "No attribution found" for identifiers not issued to this organization', async () => {
    const m = await createMerchant();
    const other = await merchantWithClick();
    for (const [i, attr] of [
      { cookie_id: 'ck_nope00000000000000000000' },
      { ref: 'nobody' },
      { click_id: '00000000-0000-4000-8000-000000000000' },
      { cookie_id: other.click.cookie_id },
      { click_id: other.click.id },
      { ref: other.slug },
    ].entries()) {
      expectError(
        await m.api.post('/api/conversions', { external_id: `e${i}`, amount: 1, ...attr }),
        404,
        'No attribution found',
      );
    }
    expect((await m.api.get('/api/conversions')).body.data.conversions).toEqual([]);
  });

  it('amounts up to one trillion; above is 400, never a failed write', async () => {
    const m = await merchantWithClick({ commission_value: 30 });
    const top = await m.api.post('/api/conversions', {
      external_id: 'top',
      amount: 1e12,
      cookie_id: m.click.cookie_id,
    });
    expect(top.status).toBe(201);
    expect(top.body.data.conversion.commission_amount).toBe(3e11);
    for (const amount of [1e12 + 1, 1e19, 1.7e308]) {
      expectError(
        await m.api.post('/api/conversions', { external_id: `big${amount}`, amount, cookie_id: m.click.cookie_id }),
        400,
        /^amount: /,
      );
      expectError(
        await m.api.post('/api/conversions', {
          external_id: `big-c${amount}`,
          amount,
          customer_id: 'c-big',
          cookie_id: m.click.cookie_id,
        }),
        400,
        /^amount: /,
      );
    }
  });

  it('kind "recurring" without a customer is 400', async () => {
    const m = await merchantWithClick();
    expectError(
      await m.api.post('/api/conversions', {
        external_id: 'r',
        amount: 1,
        cookie_id: m.click.cookie_id,
        kind: 'recurring',
      }),
      400,
      /^kind: /,
    );
  });
});

describe('POST /api/conversions: customers and recurring charges', () => {
  it('the whole flow: click -> customer -> initial -> recurring reuses the affiliate without a click', async () => {
    const m = await merchantWithClick({ commission_value: 20 });
    await m.api.post('/api/customers', { customer_id: 'cus_1', cookie_id: m.click.cookie_id });
    const initial = await m.api.post('/api/conversions', {
      external_id: 'in_1',
      amount: 100,
      customer_id: 'cus_1',
      cookie_id: m.click.cookie_id,
    });
    expect(initial.status).toBe(201);
    expect(initial.body.data.conversion).toMatchObject({
      kind: 'initial',
      commission_amount: 20,
      customer_id: 'cus_1',
      affiliate_id: m.affiliate.id,
    });
    const recurring = await m.api.post('/api/conversions', { external_id: 'in_2', amount: 100, customer_id: 'cus_1' });
    expect(recurring.status).toBe(201);
    expect(recurring.body.data.conversion).toMatchObject({
      kind: 'recurring',
      commission_amount: 20,
      affiliate_id: m.affiliate.id,
      program_id: m.program.id,
    });
    const customer = (await m.api.get('/api/customers/cus_1')).body.data.customer;
    expect(customer.status).toBe('active');
    expect(customer.first_conversion_at).toBe(initial.body.data.conversion.occurred_at);
  });

  it('customer_id alone is recurring even on the first conversion, and skips the click window', async () => {
    const m = await createMerchant({ click_window_days: 1 });
    const click = (await m.api.post('/api/clicks', { ref: m.slug, occurred_at: daysAgo(0.5) })).body.data.click;
    await m.api.post('/api/customers', { customer_id: 'c', cookie_id: click.cookie_id });
    // shrink the window: the click is now outside it, but customer-based attribution has none
    await m.api.patch(`/api/programs/${m.program.id}`, { click_window_days: 0 });
    expectError(
      await m.api.post('/api/conversions', { external_id: 'by-click', amount: 10, cookie_id: click.cookie_id }),
      410,
    );
    const res = await m.api.post('/api/conversions', { external_id: 'x1', amount: 10, customer_id: 'c' });
    expect(res.status).toBe(201);
    expect(res.body.data.conversion).toMatchObject({ kind: 'recurring', affiliate_id: m.affiliate.id });
  });

  it('customer_id alone may be sent as kind "initial" on the first conversion only', async () => {
    const m = await createMerchant();
    await m.api.post('/api/customers', { customer_id: 'c', ref: m.slug });
    const first = await m.api.post('/api/conversions', {
      external_id: 'f',
      amount: 10,
      customer_id: 'c',
      kind: 'initial',
    });
    expect(first.body.data.conversion.kind).toBe('initial');
    expectError(
      await m.api.post('/api/conversions', { external_id: 'g', amount: 10, customer_id: 'c', kind: 'initial' }),
      400,
      /^kind: /,
    );
  });

  it('a cookie_id on the first conversion of a tracked customer makes it initial; the customer’s affiliate is kept', async () => {
    const m = await merchantWithClick();
    const rival = (
      await m.api.post('/api/affiliates', { email: 'r@example.com', program_id: m.program.id, slug: `r-${m.slug}` })
    ).body.data.affiliate;
    const rivalClick = (await m.api.post('/api/clicks', { ref: rival.slug })).body.data.click;
    await m.api.post('/api/customers', { customer_id: 'c', cookie_id: m.click.cookie_id });
    const res = await m.api.post('/api/conversions', {
      external_id: 'i',
      amount: 10,
      customer_id: 'c',
      cookie_id: rivalClick.cookie_id,
    });
    expect(res.body.data.conversion).toMatchObject({ kind: 'initial', affiliate_id: m.affiliate.id });
    const next = await m.api.post('/api/conversions', {
      external_id: 'j',
      amount: 10,
      customer_id: 'c',
      cookie_id: rivalClick.cookie_id,
    });
    expect(next.body.data.conversion).toMatchObject({ kind: 'recurring', affiliate_id: m.affiliate.id });
  });

  it('click attribution with an unknown customer_id creates the customer (active) tied to the click', async () => {
    const m = await merchantWithClick();
    const res = await m.api.post('/api/conversions', {
      external_id: 'new',
      amount: 30,
      customer_id: 'cus_new',
      click_id: m.click.id,
    });
    expect(res.status).toBe(201);
    expect(res.body.data.conversion).toMatchObject({ kind: 'initial', customer_id: 'cus_new', click_id: m.click.id });
    const customer = (await m.api.get('/api/customers/cus_new')).body.data.customer;
    expect(customer).toMatchObject({ status: 'active', affiliate_id: m.affiliate.id, click_id: m.click.id });
    expect(
      (await m.api.post('/api/conversions', { external_id: 'new2', amount: 30, customer_id: 'cus_new' })).body.data
        .conversion.kind,
    ).toBe('recurring');
  });

  it('404 "No attribution found" for a customer_id never tracked (recurring requires a tracked customer)', async () => {
    const m = await createMerchant();
    expectError(
      await m.api.post('/api/conversions', { external_id: 'x', amount: 10, customer_id: 'ghost' }),
      404,
      'No attribution found',
    );
    const other = await createMerchant();
    await other.api.post('/api/customers', { customer_id: 'theirs', ref: other.slug });
    expectError(
      await m.api.post('/api/conversions', { external_id: 'y', amount: 10, customer_id: 'theirs' }),
      404,
      'No attribution found',
    );
  });

  it('past the commission window: zero commission and the customer becomes capped, and stays capped', async () => {
    const m = await createMerchant({ commission_value: 50, commission_window_months: 2 });
    await m.api.post('/api/customers', { customer_id: 'c', ref: m.slug });
    const first = await m.api.post('/api/conversions', {
      external_id: 'm0',
      amount: 10,
      customer_id: 'c',
      occurred_at: monthsAgo(3),
    });
    expect(first.body.data.conversion.commission_amount).toBe(5);
    const inside = await m.api.post('/api/conversions', {
      external_id: 'm1',
      amount: 10,
      customer_id: 'c',
      occurred_at: monthsAgo(2),
    });
    expect(inside.body.data.conversion.commission_amount).toBe(5);
    expect((await m.api.get('/api/customers/c')).body.data.customer.status).toBe('active');

    const past = await m.api.post('/api/conversions', { external_id: 'm3', amount: 10, customer_id: 'c' });
    expect(past.status).toBe(201);
    expect(past.body.data.conversion).toMatchObject({ commission_amount: 0, kind: 'recurring' });
    expect((await m.api.get('/api/customers/c')).body.data.customer.status).toBe('capped');
    const again = await m.api.post('/api/conversions', { external_id: 'm4', amount: 10, customer_id: 'c' });
    expect(again.body.data.conversion.commission_amount).toBe(0);
    expect((await m.api.get('/api/customers/c')).body.data.customer.status).toBe('capped');
  });

  it('a backdated import moves first_conversion_at earlier', async () => {
    const m = await createMerchant({ commission_window_months: 12 });
    await m.api.post('/api/customers', { customer_id: 'c', ref: m.slug });
    await m.api.post('/api/conversions', { external_id: 'now', amount: 10, customer_id: 'c' });
    const early = daysAgo(100);
    await m.api.post('/api/conversions', { external_id: 'early', amount: 10, customer_id: 'c', occurred_at: early });
    expect((await m.api.get('/api/customers/c')).body.data.customer.first_conversion_at).toBe(
      new Date(early).toISOString(),
    );
  });

  it('lifetime programs never cap', async () => {
    const m = await createMerchant({ commission_value: 10 });
    await m.api.post('/api/customers', { customer_id: 'c', ref: m.slug });
    await m.api.post('/api/conversions', {
      external_id: 'old',
      amount: 10,
      customer_id: 'c',
      occurred_at: '2016-01-01T00:00:00Z',
    });
    const res = await m.api.post('/api/conversions', { external_id: 'new', amount: 10, customer_id: 'c' });
    expect(res.body.data.conversion.commission_amount).toBe(1);
    expect((await m.api.get('/api/customers/c')).body.data.customer.status).toBe('active');
  });

  it('a paid conversion reactivates a canceled customer; a zero-amount one leaves a trial as is', async () => {
    const m = await createMerchant();
    await m.api.post('/api/customers', { customer_id: 'c', ref: m.slug });
    await m.api.post('/api/conversions', { external_id: 'zero', amount: 0, customer_id: 'c' });
    expect((await m.api.get('/api/customers/c')).body.data.customer.status).toBe('trial');
    await m.api.patch('/api/customers/c', { status: 'canceled' });
    await m.api.post('/api/conversions', { external_id: 'paid', amount: 5, customer_id: 'c' });
    expect((await m.api.get('/api/customers/c')).body.data.customer.status).toBe('active');
  });

  it('flat commissions and currencies', async () => {
    const m = await createMerchant({ commission_type: 'flat', commission_value: 7.5, currency: 'EUR' });
    const eur = await m.api.post('/api/conversions', { external_id: 'f1', amount: 1000, ref: m.slug });
    expect(eur.body.data.conversion).toMatchObject({ commission_amount: 7.5, currency: 'EUR' });
    const gbp = await m.api.post('/api/conversions', { external_id: 'f2', amount: 3, ref: m.slug, currency: 'gbp' });
    expect(gbp.body.data.conversion.currency).toBe('GBP');
  });

  it('money is exact: amounts keep their decimals and commissions round half-up', async () => {
    const m = await createMerchant({ commission_value: 50 });
    const res = await m.api.post('/api/conversions', { external_id: 'cents', amount: 1.05, ref: m.slug });
    expect(res.body.data.conversion).toMatchObject({ amount: 1.05, commission_amount: 0.53 });
    const big = await m.api.post('/api/conversions', { external_id: 'big', amount: 123456789.99, ref: m.slug });
    expect(big.body.data.conversion).toMatchObject({ amount: 123456789.99, commission_amount: 61728395 });
  });
});

describe('POST /api/conversions: idempotency and validation', () => {
  it('a re-sent external_id returns the existing record with deduped true (200) and is never counted twice', async () => {
    const m = await merchantWithClick();
    const first = await m.api.post('/api/conversions', {
      external_id: 'same',
      amount: 10,
      cookie_id: m.click.cookie_id,
    });
    const again = await m.api.post('/api/conversions', {
      external_id: 'same',
      amount: 99,
      cookie_id: m.click.cookie_id,
    });
    expect(again.status).toBe(200);
    expect(again.body.deduped).toBe(true);
    expect(again.body.data.conversion).toEqual(first.body.data.conversion);
    expect((await m.api.get('/api/conversions')).body.data.conversions).toHaveLength(1);
  });

  it('external ids are unique per organization, not globally', async () => {
    const a = await createMerchant();
    const b = await createMerchant();
    expect((await a.api.post('/api/conversions', { external_id: 'inv_1', amount: 1, ref: a.slug })).status).toBe(201);
    expect((await b.api.post('/api/conversions', { external_id: 'inv_1', amount: 1, ref: b.slug })).status).toBe(201);
  });

  it.each([
    [{ amount: 10, ref: 'x' }, /^external_id: Required/],
    [{ external_id: 'e', ref: 'x' }, /^amount: Required/],
    [{ external_id: 'e', amount: '10', ref: 'x' }, /^amount: Expected number, received string/],
    [{ external_id: 'e', amount: -1, ref: 'x' }, /^amount: /],
    [{ external_id: 'e', amount: 1 }, /customer_id/],
    [{ external_id: 'e', amount: 1, ref: 'x', kind: 'first' }, /^kind: /],
    [{ external_id: 'e', amount: 1, ref: 'x', currency: 'EURO' }, /^currency: /],
    [{ external_id: '', amount: 1, ref: 'x' }, /^external_id: /],
    [{ external_id: 'e', amount: 1, ref: 'x', occurred_at: 'soon' }, /^occurred_at: /],
  ])('400 naming the field for %j', async (body, message) => {
    const org = await createOrganization();
    expectError(await org.api.post('/api/conversions', body), 400, message);
  });

  it('400 for an occurred_at more than 5 minutes in the future', async () => {
    const m = await createMerchant();
    const future = new Date(Date.now() + 6 * 60_000).toISOString();
    expectError(
      await m.api.post('/api/conversions', { external_id: 'f', amount: 1, ref: m.slug, occurred_at: future }),
      400,
      /^occurred_at: /,
    );
  });
});

describe('GET /api/conversions', () => {
  it('gets by UUID or external_id; 403 across organizations; 404 for none', async () => {
    const m = await createMerchant();
    const c = (await m.api.post('/api/conversions', { external_id: 'inv_9', amount: 9, ref: m.slug })).body.data
      .conversion;
    expect((await m.api.get(`/api/conversions/${c.id}`)).body.data.conversion).toEqual(c);
    expect((await m.api.get('/api/conversions/inv_9')).body.data.conversion).toEqual(c);
    const other = await createOrganization();
    expectError(await other.api.get(`/api/conversions/${c.id}`), 403);
    expectError(await other.api.get('/api/conversions/nothing-here'), 404);
  });

  it('lists newest first with filters and cursor pagination', async () => {
    const m = await createMerchant();
    const second = (
      await m.api.post('/api/affiliates', { email: 's@example.com', program_id: m.program.id, slug: `s-${m.slug}` })
    ).body.data.affiliate;
    await m.api.post('/api/customers', { customer_id: 'c1', ref: m.slug });
    for (let i = 0; i < 5; i++) {
      await m.api.post('/api/conversions', {
        external_id: `c1-${i}`,
        amount: 10,
        customer_id: 'c1',
        occurred_at: daysAgo(10 - i),
      });
    }
    await m.api.post('/api/conversions', {
      external_id: 's-0',
      amount: 10,
      ref: second.slug,
      occurred_at: daysAgo(20),
    });

    const all = await m.api.get('/api/conversions');
    expect(all.body.data.conversions.map((c: any) => c.external_id)).toEqual([
      'c1-4',
      'c1-3',
      'c1-2',
      'c1-1',
      'c1-0',
      's-0',
    ]);
    expect(all.body.data.next_cursor).toBeNull();

    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await m.api.get(`/api/conversions?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      ids.push(...page.body.data.conversions.map((c: any) => c.external_id));
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(ids).toEqual(['c1-4', 'c1-3', 'c1-2', 'c1-1', 'c1-0', 's-0']);

    expect((await m.api.get('/api/conversions?customer_id=c1')).body.data.conversions).toHaveLength(5);
    expect(
      (await m.api.get(`/api/conversions?affiliate_id=${second.id}`)).body.data.conversions.map(
        (c: any) => c.external_id,
      ),
    ).toEqual(['s-0']);
    expect((await m.api.get(`/api/conversions?program_id=${m.program.id}`)).body.data.conversions).toHaveLength(6);
    const windowed = await m.api.get(
      `/api/conversions?from=${encodeURIComponent(daysAgo(9.5))}&to=${encodeURIComponent(daysAgo(7.5))}`,
    );
    expect(windowed.body.data.conversions.map((c: any) => c.external_id)).toEqual(['c1-2', 'c1-1']);
    expectError(await m.api.get('/api/conversions?affiliate_id=nope'), 400, /^affiliate_id: /);
    expectError(await m.api.get('/api/conversions?from=yesterday'), 400, /^from: /);
  });
});
