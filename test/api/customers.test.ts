import { describe, expect, it } from 'vitest';
import { createMerchant, expectError } from '../support/api.js';

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();

describe('POST /api/customers', () => {
  it('creates a trial customer tied to the click (201, deduped false)', async () => {
    const m = await createMerchant();
    const click = (await m.api.post('/api/clicks', { ref: m.slug })).body.data.click;
    const res = await m.api.post('/api/customers', {
      customer_id: 'cus_A',
      cookie_id: click.cookie_id,
      email: 'a@x.io',
      name: 'A',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      deduped: false,
      data: {
        customer: {
          id: expect.any(String),
          customer_id: 'cus_A',
          status: 'trial',
          affiliate_id: m.affiliate.id,
          program_id: m.program.id,
          click_id: click.id,
          email: 'a@x.io',
          name: 'A',
          first_conversion_at: null,
          created_at: expect.any(String),
          updated_at: expect.any(String),
          livemode: true,
        },
      },
    });
  });

  it('attributes by click_id, by ref, and by a raw slug in cookie_id', async () => {
    const m = await createMerchant();
    const click = (await m.api.post('/api/clicks', { ref: m.slug })).body.data.click;
    const byClick = await m.api.post('/api/customers', { customer_id: 'c1', click_id: click.id });
    expect(byClick.body.data.customer).toMatchObject({ affiliate_id: m.affiliate.id, click_id: click.id });
    const byRef = await m.api.post('/api/customers', { customer_id: 'c2', ref: m.slug });
    expect(byRef.body.data.customer).toMatchObject({ affiliate_id: m.affiliate.id, click_id: null });
    const bySlugCookie = await m.api.post('/api/customers', { customer_id: 'c3', cookie_id: m.slug });
    expect(bySlugCookie.status).toBe(201);
    expect(bySlugCookie.body.data.customer).toMatchObject({ affiliate_id: m.affiliate.id, click_id: null });
  });

  it('uses click_id, then cookie_id, then ref when several are sent', async () => {
    const m = await createMerchant();
    const other = (
      await m.api.post('/api/affiliates', { email: 'o@example.com', program_id: m.program.id, slug: `o-${m.slug}` })
    ).body.data.affiliate;
    const click = (await m.api.post('/api/clicks', { ref: m.slug })).body.data.click;
    const otherClick = (await m.api.post('/api/clicks', { ref: other.slug })).body.data.click;
    const res = await m.api.post('/api/customers', {
      customer_id: 'p1',
      click_id: click.id,
      cookie_id: otherClick.cookie_id,
      ref: other.slug,
    });
    expect(res.body.data.customer.affiliate_id).toBe(m.affiliate.id);
    const res2 = await m.api.post('/api/customers', {
      customer_id: 'p2',
      cookie_id: otherClick.cookie_id,
      ref: m.slug,
    });
    expect(res2.body.data.customer.affiliate_id).toBe(other.id);
  });

  it('honours the status given', async () => {
    const m = await createMerchant();
    const res = await m.api.post('/api/customers', { customer_id: 'paying', ref: m.slug, status: 'active' });
    expect(res.body.data.customer.status).toBe('active');
  });

  it('is idempotent on customer_id: a repeat answers 200 deduped with the existing customer', async () => {
    const m = await createMerchant();
    const first = await m.api.post('/api/customers', { customer_id: 'dup', ref: m.slug });
    const again = await m.api.post('/api/customers', { customer_id: 'dup', ref: m.slug, status: 'active' });
    expect(again.status).toBe(200);
    expect(again.body.deduped).toBe(true);
    expect(again.body.data.customer).toEqual(first.body.data.customer);
  });

  it('customer ids are per organization', async () => {
    const a = await createMerchant();
    const b = await createMerchant();
    expect((await a.api.post('/api/customers', { customer_id: 'shared-id', ref: a.slug })).status).toBe(201);
    expect((await b.api.post('/api/customers', { customer_id: 'shared-id', ref: b.slug })).status).toBe(201);
  });

  it('404 "No attribution found" for anything this organization did not issue', async () => {
    const m = await createMerchant();
    const other = await createMerchant();
    const otherClick = (await other.api.post('/api/clicks', { ref: other.slug })).body.data.click;
    const cases = [
      { cookie_id: 'ck_doesNotExist000000000000' },
      { cookie_id: 'not-a-slug-either' },
      { ref: 'unknown-slug' },
      { click_id: '00000000-0000-4000-8000-000000000000' },
      { click_id: 'not-a-uuid' },
      { ref: other.slug },
      { cookie_id: otherClick.cookie_id },
      { click_id: otherClick.id },
    ];
    for (const [i, attribution] of cases.entries()) {
      expectError(
        await m.api.post('/api/customers', { customer_id: `x${i}`, ...attribution }),
        404,
        'No attribution found',
      );
    }
  });

  it('410 when the click is older than the program click window', async () => {
    const m = await createMerchant({ click_window_days: 30 });
    const old = (await m.api.post('/api/clicks', { ref: m.slug, occurred_at: daysAgo(31) })).body.data.click;
    expectError(await m.api.post('/api/customers', { customer_id: 'late', cookie_id: old.cookie_id }), 410);
    expectError(await m.api.post('/api/customers', { customer_id: 'late', click_id: old.id }), 410);
    const recent = (await m.api.post('/api/clicks', { ref: m.slug, occurred_at: daysAgo(29) })).body.data.click;
    expect((await m.api.post('/api/customers', { customer_id: 'ok', cookie_id: recent.cookie_id })).status).toBe(201);
    // a slug is not a click: no window applies
    expect((await m.api.post('/api/customers', { customer_id: 'slug', ref: m.slug })).status).toBe(201);
  });

  it('400 without customer_id or without any attribution field, naming the field', async () => {
    const m = await createMerchant();
    expectError(await m.api.post('/api/customers', { ref: m.slug }), 400, /^customer_id: Required/);
    expectError(await m.api.post('/api/customers', { customer_id: 'c' }), 400, /cookie_id/);
    expectError(
      await m.api.post('/api/customers', { customer_id: 'c', ref: m.slug, status: 'paying' }),
      400,
      /^status: /,
    );
    expectError(
      await m.api.post('/api/customers', { customer_id: 42, ref: m.slug }),
      400,
      /^customer_id: Expected string/,
    );
  });
});

describe('GET and PATCH /api/customers/{id}', () => {
  it('finds by UUID and by the merchant customer_id, and changes status both ways', async () => {
    const m = await createMerchant();
    const created = (await m.api.post('/api/customers', { customer_id: 'cus_42', ref: m.slug })).body.data.customer;
    expect((await m.api.get(`/api/customers/${created.id}`)).body.data.customer).toEqual(created);
    expect((await m.api.get('/api/customers/cus_42')).body.data.customer).toEqual(created);

    const canceled = await m.api.patch('/api/customers/cus_42', { status: 'canceled' });
    expect(canceled.status).toBe(200);
    expect(canceled.body.data.customer.status).toBe('canceled');
    const reactivated = await m.api.patch(`/api/customers/${created.id}`, { status: 'active' });
    expect(reactivated.body.data.customer.status).toBe('active');
    expect((await m.api.get('/api/customers/cus_42')).body.data.customer.status).toBe('active');
  });

  it('path ids with reserved characters work when URL-encoded', async () => {
    const m = await createMerchant();
    await m.api.post('/api/customers', { customer_id: 'cus/with space', ref: m.slug });
    expect((await m.api.get(`/api/customers/${encodeURIComponent('cus/with space')}`)).status).toBe(200);
  });

  it('403 for another organization’s customer, 404 for none', async () => {
    const a = await createMerchant();
    const b = await createMerchant();
    const created = (await a.api.post('/api/customers', { customer_id: 'only-in-a', ref: a.slug })).body.data.customer;
    expectError(await b.api.patch('/api/customers/only-in-a', { status: 'canceled' }), 403);
    expectError(await b.api.patch(`/api/customers/${created.id}`, { status: 'canceled' }), 403);
    expectError(await b.api.get('/api/customers/only-in-a'), 403);
    expectError(await b.api.patch('/api/customers/nobody', { status: 'canceled' }), 404);
    expectError(await b.api.get('/api/customers/00000000-0000-4000-8000-000000000000'), 404);
    expect((await a.api.get('/api/customers/only-in-a')).body.data.customer.status).toBe('trial');
  });

  it('400 for a missing or unknown status', async () => {
    const m = await createMerchant();
    await m.api.post('/api/customers', { customer_id: 'c', ref: m.slug });
    expectError(await m.api.patch('/api/customers/c', {}), 400, /^status: Required/);
    expectError(await m.api.patch('/api/customers/c', { status: 'gone' }), 400, /^status: /);
  });
});
