import { beforeAll, describe, expect, it } from 'vitest';
import { ErrorMessages } from '@affiliate-attribution/contract';
import { admin, api, createMerchant, createOrganization, expectError, request, type Api } from '../support/api.js';
import { testServer } from '../support/server.js';

/**
 * Test mode (shared/spec/test-mode.md): a test key (`svc_test_…`) reads and writes the
 * organization's test data, a live key its live data, and neither ever sees the other's.
 */

type Merchant = Awaited<ReturnType<typeof createMerchant>>;

/** A program and an affiliate in the test data of the merchant (the same slug as live: uniqueness is per mode). */
async function testProgramAndAffiliate(m: Merchant) {
  const program = await m.testApi.post('/api/programs', { name: 'Main (test)', commission_value: 30 });
  expect(program.status).toBe(201);
  const affiliate = await m.testApi.post('/api/affiliates', {
    email: m.affiliate.email,
    program_id: program.body.data.program.id,
    slug: m.slug,
  });
  expect(affiliate.status).toBe(201);
  return { program: program.body.data.program, affiliate: affiliate.body.data.affiliate };
}

async function rowCounts(organizationId: string): Promise<Record<string, number>> {
  const { db } = await testServer();
  const tables = await db.orm.em
    .fork()
    .getConnection()
    .execute<{ table_name: string }[]>(
      `select table_name from information_schema.columns where column_name = 'organization_id' and table_schema = current_schema() order by table_name`,
    );
  const [counts] = await db.orm.em
    .fork()
    .getConnection()
    .execute<Record<string, string>[]>(
      `select ${tables.map((t) => `(select count(*) from "${t.table_name}" where organization_id = ?) as "${t.table_name}"`).join(', ')}`,
      tables.map(() => organizationId),
    );
  return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Number(v)]));
}

async function testOrganizationOf(liveId: string): Promise<string> {
  const { db } = await testServer();
  const [row] = await db.orm.em
    .fork()
    .getConnection()
    .execute<{ id: string }[]>('select id from organizations where live_organization_id = ?', [liveId]);
  return row.id;
}

describe('test and live keys', () => {
  it('an organization comes with a live and a test key; /api/me tells them apart, with the same account id', async () => {
    const org = await createOrganization('Both Modes');
    expect(org.key).toMatch(/^svc-/);
    expect(org.testKey).toMatch(/^svc_test_[A-Za-z0-9_-]{43}$/);
    expect((await org.api.get('/api/me')).body).toEqual({
      success: true,
      data: { organization: { id: org.id, name: 'Both Modes', livemode: true, link_params: ['ref'] } },
    });
    expect((await org.testApi.get('/api/me')).body).toEqual({
      success: true,
      data: { organization: { id: org.id, name: 'Both Modes', livemode: false, link_params: ['ref'] } },
    });
    // The bare form works for test keys too.
    expect(
      (await request('GET', '/api/me', { headers: { authorization: org.testKey } })).body.data.organization.livemode,
    ).toBe(false);
    expectError(
      await request('GET', '/api/me', { headers: { authorization: 'Bearer svc_test_' } }),
      401,
      ErrorMessages.invalidApiKey,
    );
    expectError(
      await request('GET', '/api/me', { headers: { authorization: 'Bearer svc_test_not-a-key' } }),
      401,
      ErrorMessages.invalidApiKey,
    );
  });

  it('an X-Mode header that contradicts the key is refused (400), on the hot paths too; one that agrees is served', async () => {
    const org = await createOrganization('Header Modes');
    const liveAsTest = 'X-Mode: test does not apply to a live API key: use a test key (svc_test_…) for test data';
    const testAsLive = 'X-Mode: live does not apply to a test API key: use a live key for live data';
    const bogus = 'X-Mode: must be "live" or "test" (the dashboard\'s test-mode switch); leave it out for live data';
    for (const [method, path, body] of [
      ['GET', '/api/me', undefined],
      ['POST', '/api/clicks', { ref: 'nobody-here' }],
      ['GET', '/api/programs', undefined],
    ] as const) {
      expectError(await request(method, path, { key: org.key, body, headers: { 'x-mode': 'test' } }), 400, liveAsTest);
      expectError(
        await request(method, path, { key: org.testKey, body, headers: { 'x-mode': 'live' } }),
        400,
        testAsLive,
      );
      expectError(await request(method, path, { key: org.key, body, headers: { 'x-mode': 'sandbox' } }), 400, bogus);
    }
    expect(
      (await request('GET', '/api/me', { key: org.key, headers: { 'x-mode': 'live' } })).body.data.organization
        .livemode,
    ).toBe(true);
    expect(
      (await request('GET', '/api/me', { key: org.testKey, headers: { 'x-mode': 'test' } })).body.data.organization
        .livemode,
    ).toBe(false);
  });

  it('the operator issues keys of either mode (no body: live), lists both with their mode, and revokes a test key', async () => {
    const org = await createOrganization();
    const live = await admin().post(`/admin/organizations/${org.id}/api-keys`);
    expect(live.status).toBe(201);
    expect(live.body.data.api_key).toMatch(/^svc-/);
    expect(live.body.data.api_key_info.mode).toBe('live');
    const explicitLive = await admin().post(`/admin/organizations/${org.id}/api-keys`, { mode: 'live' });
    expect([explicitLive.status, explicitLive.body.data.api_key_info.mode]).toEqual([201, 'live']);
    const test = await admin().post(`/admin/organizations/${org.id}/api-keys`, { mode: 'test' });
    expect(test.status).toBe(201);
    expect(test.body.data.api_key).toMatch(/^svc_test_/);
    expect(test.body.data.api_key_info).toMatchObject({
      mode: 'test',
      redacted: expect.stringMatching(/^svc_test_.{4}….{4}$/),
      revoked_at: null,
    });
    expect((await api(test.body.data.api_key).get('/api/me')).body.data.organization).toEqual({
      id: org.id,
      name: org.name,
      livemode: false,
      link_params: ['ref'],
    });
    expectError(await admin().post(`/admin/organizations/${org.id}/api-keys`, { mode: 'sandbox' }), 400, /^mode: /);

    const listed = await admin().get(`/admin/organizations/${org.id}/api-keys`);
    expect(listed.body.data.api_keys.map((k: { id: string; mode: string }) => [k.id, k.mode])).toEqual([
      [org.keyId, 'live'],
      [org.testKeyId, 'test'],
      [live.body.data.api_key_info.id, 'live'],
      [explicitLive.body.data.api_key_info.id, 'live'],
      [test.body.data.api_key_info.id, 'test'],
    ]);

    const revoked = await admin().delete(`/admin/organizations/${org.id}/api-keys/${org.testKeyId}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.api_key_info).toMatchObject({
      id: org.testKeyId,
      mode: 'test',
      revoked_at: expect.any(String),
    });
    expectError(await org.testApi.get('/api/me'), 401, ErrorMessages.invalidApiKey);
    expect((await api(test.body.data.api_key).get('/api/me')).status).toBe(200);
    expect((await org.api.get('/api/me')).status).toBe(200);
  });

  it('a test organization is not an organization of the operator’s routes', async () => {
    const org = await createOrganization();
    const twin = await testOrganizationOf(org.id);
    expectError(await admin().post(`/admin/organizations/${twin}/api-keys`), 404);
    expectError(await admin().get(`/admin/organizations/${twin}/api-keys`), 404);
    expectError(await admin().delete(`/admin/organizations/${twin}`), 404);
  });
});

describe('uniqueness holds within a mode', () => {
  it('the same slug, customer_id and external_id exist once in test and once in live', async () => {
    const m = await createMerchant();
    const t = await testProgramAndAffiliate(m);
    expect(t.affiliate.slug).toBe(m.slug);
    expect(t.affiliate.livemode).toBe(false);
    expect(t.affiliate.id).not.toBe(m.affiliate.id);

    const liveCustomer = await m.api.post('/api/customers', { customer_id: 'cus_same', ref: m.slug });
    const testCustomer = await m.testApi.post('/api/customers', { customer_id: 'cus_same', ref: m.slug });
    expect([liveCustomer.status, testCustomer.status]).toEqual([201, 201]);
    expect([liveCustomer.body.data.customer.livemode, testCustomer.body.data.customer.livemode]).toEqual([true, false]);
    expect(testCustomer.body.data.customer.affiliate_id).toBe(t.affiliate.id);

    const liveSale = await m.api.post('/api/conversions', {
      external_id: 'ord_same',
      amount: 100,
      customer_id: 'cus_same',
    });
    const testSale = await m.testApi.post('/api/conversions', {
      external_id: 'ord_same',
      amount: 100,
      customer_id: 'cus_same',
    });
    expect([liveSale.status, testSale.status]).toEqual([201, 201]);
    expect(testSale.body.data.conversion).toMatchObject({ livemode: false, affiliate_id: t.affiliate.id });
    // Each repeat is deduped in its own mode.
    const again = await m.testApi.post('/api/conversions', {
      external_id: 'ord_same',
      amount: 100,
      customer_id: 'cus_same',
    });
    expect([again.status, again.body.deduped, again.body.data.conversion.id]).toEqual([
      200,
      true,
      testSale.body.data.conversion.id,
    ]);
    // Within a mode, a taken slug is still a conflict.
    expectError(
      await m.testApi.post('/api/affiliates', { email: 'other@example.com', program_id: t.program.id, slug: m.slug }),
      409,
    );
  });
});

describe('test data is invisible to live keys, and live data to test keys', () => {
  let m: Merchant;
  let test: Record<string, string>;
  let live: Record<string, string>;

  beforeAll(async () => {
    m = await createMerchant();
    const t = await testProgramAndAffiliate(m);
    const ids = async (key: Api, program: { id: string }, affiliate: { id: string }, suffix: string) => {
      const customer = (await key.post('/api/customers', { customer_id: `cus_${suffix}`, ref: m.slug })).body.data
        .customer;
      const conversion = (
        await key.post('/api/conversions', { external_id: `ord_${suffix}`, amount: 50, customer_id: `cus_${suffix}` })
      ).body.data.conversion;
      const commission = (
        await key.post('/api/commissions', { affiliate_id: affiliate.id, amount: 40, description: 'bonus' })
      ).body.data.commission;
      const payouts = await key.post('/api/payouts', {});
      expect(payouts.status, JSON.stringify(payouts.body)).toBe(201);
      const coupon = (await key.post('/api/coupons', { code: `C-${suffix}-${Date.now()}`, affiliate_id: affiliate.id }))
        .body.data.coupon;
      const endpoint = (
        await key.post('/api/webhook-endpoints', {
          url: `http://127.0.0.1:9/${suffix}`,
          events: ['conversion.created'],
        })
      ).body.data.webhook_endpoint;
      const imported = await key.post('/api/imports', {
        source: 'csv',
        credentials: {
          affiliates_csv: `id,email,first_name,last_name,status,payout_email,tokens\n${suffix}1,imp-${suffix}@example.com,I,M,active,,\n`,
        },
        program_id: program.id,
        dry_run: true,
      });
      expect(imported.status, JSON.stringify(imported.body)).toBe(202);
      const commissions = (await key.get(`/api/commissions?affiliate_id=${affiliate.id}`)).body.data.commissions as {
        id: string;
      }[];
      return {
        program: program.id,
        affiliate: affiliate.id,
        customer: customer.id,
        customer_id: customer.customer_id,
        conversion: conversion.id,
        external_id: conversion.external_id,
        commission: commission?.id ?? commissions[0].id,
        payout: payouts.body.data.payouts[0].id,
        coupon: coupon.id,
        endpoint: endpoint.id,
        import: imported.body.data.import.id,
      };
    };
    test = await ids(m.testApi, t.program, t.affiliate, 'test');
    live = await ids(m.api, m.program, m.affiliate, 'live');
  });

  /** Every path naming a row, by kind: reads, changes and deletions. */
  const paths = (r: Record<string, string>): [string, string, unknown?][] => [
    ['GET', `/api/programs/${r.program}`],
    ['PATCH', `/api/programs/${r.program}`, { name: 'Renamed' }],
    ['GET', `/api/affiliates/${r.affiliate}`],
    ['PATCH', `/api/affiliates/${r.affiliate}`, { name: 'Renamed' }],
    ['POST', `/api/affiliates/${r.affiliate}/erase`],
    ['GET', `/api/customers/${r.customer}`],
    ['PATCH', `/api/customers/${r.customer}`, { status: 'canceled' }],
    ['GET', `/api/conversions/${r.conversion}`],
    ['POST', `/api/conversions/${r.conversion}/refund`, {}],
    ['GET', `/api/commissions/${r.commission}`],
    ['POST', `/api/commissions/${r.commission}/reject`, {}],
    ['GET', `/api/payouts/${r.payout}`],
    ['POST', `/api/payouts/${r.payout}/cancel`, {}],
    ['DELETE', `/api/coupons/${r.coupon}`],
    ['GET', `/api/webhook-endpoints/${r.endpoint}`],
    ['PATCH', `/api/webhook-endpoints/${r.endpoint}`, { enabled: false }],
    ['GET', `/api/webhook-endpoints/${r.endpoint}/deliveries`],
    ['DELETE', `/api/webhook-endpoints/${r.endpoint}`],
    ['GET', `/api/imports/${r.import}`],
    ['DELETE', `/api/imports/${r.import}`],
  ];

  it('a test id under a live key is 404 (never 403), for every kind of row, to read, change or delete', async () => {
    for (const [method, path, body] of paths(test)) {
      const res = await request(method, path, { key: m.key, body });
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(404);
    }
    // By the merchant's own ids too.
    expect((await m.api.get(`/api/customers/cus_test`)).status).toBe(404);
    expect((await m.api.get(`/api/conversions/ord_test`)).status).toBe(404);
  });

  it('and a live id under a test key is 404 too', async () => {
    for (const [method, path, body] of paths(live)) {
      const res = await request(method, path, { key: m.testKey, body });
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(404);
    }
  });

  it('references in bodies do not cross modes either: a live key cannot pay a test affiliate or use a test program', async () => {
    expectError(
      await m.api.post('/api/commissions', { affiliate_id: test.affiliate, amount: 5, description: 'x' }),
      404,
    );
    expectError(await m.api.post('/api/affiliates', { email: 'x@example.com', program_id: test.program }), 404);
    expectError(await m.testApi.post('/api/coupons', { code: `X-${Date.now()}`, affiliate_id: live.affiliate }), 404);
  });

  it('another organization’s row is still 403', async () => {
    const other = await createOrganization();
    expectError(await other.testApi.get(`/api/programs/${test.program}`), 403, ErrorMessages.forbidden);
    expectError(await other.api.get(`/api/programs/${test.program}`), 403, ErrorMessages.forbidden);
    expectError(await other.testApi.get(`/api/webhook-endpoints/${test.endpoint}`), 403);
    expectError(await other.testApi.get(`/api/imports/${test.import}`), 403);
  });

  it('the rows were left as they were, and each key reads its own with livemode', async () => {
    for (const [key, r, livemode] of [
      [m.testApi, test, false],
      [m.api, live, true],
    ] as const) {
      for (const path of [
        `/api/programs/${r.program}`,
        `/api/affiliates/${r.affiliate}`,
        `/api/customers/${r.customer}`,
        `/api/conversions/${r.conversion}`,
        `/api/payouts/${r.payout}`,
        `/api/webhook-endpoints/${r.endpoint}`,
        `/api/imports/${r.import}`,
      ]) {
        const res = await key.get(path);
        expect(res.status, path).toBe(200);
        const resource = Object.values(res.body.data)[0] as { livemode: boolean; status?: string; name?: string };
        expect(resource.livemode, path).toBe(livemode);
        expect(resource.name, path).not.toBe('Renamed');
      }
    }
  });

  it('lists, reports and exports of one mode never show the other', async () => {
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const to = new Date(Date.now() + 86_400_000).toISOString();
    for (const [key, own, other, livemode] of [
      [m.testApi, test, live, false],
      [m.api, live, test, true],
    ] as const) {
      for (const [path, field] of [
        ['/api/programs', 'programs'],
        ['/api/affiliates', 'affiliates'],
        ['/api/conversions', 'conversions'],
        ['/api/commissions', 'commissions'],
        ['/api/payouts', 'payouts'],
        ['/api/coupons', 'coupons'],
        ['/api/webhook-endpoints', 'webhook_endpoints'],
        ['/api/imports', 'imports'],
      ] as const) {
        const res = await key.get(path);
        expect(res.status, path).toBe(200);
        const items = res.body.data[field] as { id: string; livemode: boolean }[];
        expect(items.length, path).toBeGreaterThan(0);
        for (const item of items) expect(item.livemode, path).toBe(livemode);
        const text = JSON.stringify(res.body);
        for (const id of Object.values(other)) expect(text.includes(id), `${path} shows ${id}`).toBe(false);
      }
      const report = await key.get(`/api/reports/affiliates?from=${from}&to=${to}`);
      expect(report.status).toBe(200);
      for (const row of report.body.data.affiliates) {
        expect(row.affiliate_id).toBe(own.affiliate);
        expect(row.livemode).toBe(livemode);
      }
      const series = await key.get(`/api/reports/timeseries?from=${from}&to=${to}`);
      expect(series.status).toBe(200);
      expect(series.body.data.livemode).toBe(livemode);
      const exported = await key.get('/api/payouts/export');
      expect(exported.status).toBe(200);
      expect(String(exported.body).includes(other.payout)).toBe(false);
    }
  });
});

describe('the public endpoints take "mode": "test"', () => {
  it('records the click and the customer in the test data of the organization in the path', async () => {
    const m = await createMerchant();
    const t = await testProgramAndAffiliate(m);
    const click = await request('POST', `/public/organizations/${m.id}/clicks`, {
      body: { ref: m.slug, mode: 'test' },
      headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0' },
    });
    expect(click.status, JSON.stringify(click.body)).toBe(201);
    expect(click.body.data.click).toMatchObject({ cookie_id: expect.stringMatching(/^ck_/), livemode: false });
    const customer = await request('POST', `/public/organizations/${m.id}/customers`, {
      body: { customerId: 'cus_public', cookieId: click.body.data.click.cookie_id, mode: 'test' },
    });
    expect(customer.status, JSON.stringify(customer.body)).toBe(201);
    expect(customer.body.data.customer).toEqual({ customer_id: 'cus_public', livemode: false });
    const seen = await m.testApi.get('/api/customers/cus_public');
    expect(seen.body.data.customer).toMatchObject({ affiliate_id: t.affiliate.id, livemode: false });
    expect((await m.api.get('/api/customers/cus_public')).status).toBe(404);

    // Default and explicit live: the live data.
    const liveClick = await request('POST', `/public/organizations/${m.id}/clicks`, {
      body: { ref: m.slug },
      headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0' },
    });
    expect(liveClick.body.data.click.livemode).toBe(true);
    const liveCustomer = await request('POST', `/public/organizations/${m.id}/customers`, {
      body: { customerId: 'cus_public', cookieId: liveClick.body.data.click.cookie_id, mode: 'live' },
    });
    expect(liveCustomer.body.data.customer).toEqual({ customer_id: 'cus_public', livemode: true });
    expect((await m.api.get('/api/customers/cus_public')).body.data.customer.affiliate_id).toBe(m.affiliate.id);
  });

  it('refuses another mode naming the field', async () => {
    const m = await createMerchant();
    expectError(
      await request('POST', `/public/organizations/${m.id}/clicks`, { body: { ref: m.slug, mode: 'sandbox' } }),
      400,
      /^mode: /,
    );
    expectError(
      await request('POST', `/public/organizations/${m.id}/customers`, {
        body: { customerId: 'c', cookieId: 'ck_x', mode: 1 },
      }),
      400,
      /^mode: /,
    );
  });
});

describe('DELETE /api/test-data', () => {
  it('deletes every test row, keeps the test settings, and leaves live data untouched', async () => {
    const m = await createMerchant();
    const t = await testProgramAndAffiliate(m);
    await m.testApi.post('/api/customers', { customer_id: 'cus_reset', ref: m.slug });
    expect(
      (await m.testApi.post('/api/conversions', { external_id: 'ord_reset', amount: 20, customer_id: 'cus_reset' }))
        .status,
    ).toBe(201);
    expect((await m.testApi.post('/api/clicks', { ref: m.slug })).status).toBe(201);
    const endpoint = (
      await m.testApi.post('/api/webhook-endpoints', {
        url: 'http://127.0.0.1:9/reset',
        events: ['conversion.created'],
      })
    ).body.data.webhook_endpoint;
    expect(
      (await m.testApi.put('/api/integrations/stripe', { signing_secret: 'whsec_test_reset_0123456789' })).status,
    ).toBe(200);
    // Live data of the same merchant.
    await m.api.post('/api/customers', { customer_id: 'cus_reset', ref: m.slug });
    expect(
      (await m.api.post('/api/conversions', { external_id: 'ord_reset', amount: 20, customer_id: 'cus_reset' })).status,
    ).toBe(201);

    const twin = await testOrganizationOf(m.id);
    const liveBefore = await rowCounts(m.id);
    const testBefore = await rowCounts(twin);

    expectError(await m.api.delete('/api/test-data'), 403, /test API key/);
    expect(await rowCounts(twin)).toEqual(testBefore);

    const res = await m.testApi.delete('/api/test-data');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data.deleted).toMatchObject({
      programs: 1,
      affiliates: 1,
      customers: 1,
      conversions: 1,
      clicks: 1,
    });
    expect(res.body.data.deleted.commissions).toBeGreaterThanOrEqual(1);
    for (const kept of ['organizations', 'api_keys', 'integrations', 'webhook_endpoints'])
      expect(res.body.data.deleted, kept).not.toHaveProperty(kept);

    const testAfter = await rowCounts(twin);
    for (const [table, n] of Object.entries(testAfter)) {
      if (['api_keys', 'integrations', 'webhook_endpoints'].includes(table)) expect(n, table).toBe(testBefore[table]);
      // The reset's receipt (GET /api/test-data/deletion).
      else if (table === 'data_deletions') expect(n, table).toBe(1);
      else expect(n, table).toBe(0);
    }
    expect(res.body.data.deletion).toMatchObject({
      organization_id: twin,
      status: 'completed',
      phase: null,
      error: null,
      deleted: res.body.data.deleted,
    });
    expect((await m.testApi.get('/api/test-data/deletion')).body.data.deletion).toEqual(res.body.data.deletion);
    expectError(await m.api.get('/api/test-data/deletion'), 403, /test API key/);
    expect(await rowCounts(m.id)).toEqual(liveBefore);

    // The test key still works; its settings are there; the test data starts over.
    expect((await m.testApi.get('/api/me')).body.data.organization.livemode).toBe(false);
    expect((await m.testApi.get(`/api/webhook-endpoints/${endpoint.id}`)).status).toBe(200);
    expect((await m.testApi.get('/api/programs')).body.data.programs).toEqual([]);
    expect((await m.testApi.get(`/api/affiliates/${t.affiliate.id}`)).status).toBe(404);
    // The deleted slug is no longer cached anywhere: a click on it finds nothing.
    expectError(await m.testApi.post('/api/clicks', { ref: m.slug }), 404);
    expect((await m.api.post('/api/clicks', { ref: m.slug })).status).toBe(201);
    expect((await m.api.get('/api/conversions/ord_reset')).status).toBe(200);
    // A second reset deletes nothing more.
    const again = await m.testApi.delete('/api/test-data');
    expect(Object.values(again.body.data.deleted as Record<string, number>).every((n) => n === 0)).toBe(true);
  });
});
