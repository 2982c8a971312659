import type { AddressInfo } from 'node:net';
import { type Server, createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { createMerchant, createOrganization, expectError, request } from '../support/api.js';
import { TEST_ADMIN_TOKEN, TEST_PUBLIC_BASE_URL, testServer } from '../support/server.js';

const BROWSER_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const ORIGIN = 'https://shop.example.com';
let counter = 0;
const unique = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${++counter}`;

const clicksPath = (org: string) => `/public/organizations/${org}/clicks`;
const customersPath = (org: string) => `/public/organizations/${org}/customers`;

/** A POST as the snippet sends it: JSON in text/plain, from a browser on the merchant's origin. */
function snippetPost(path: string, body: unknown, headers: Record<string, string> = {}) {
  return request('POST', path, {
    rawBody: JSON.stringify(body),
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': BROWSER_UA, origin: ORIGIN, ...headers },
  });
}

async function clickRows(organizationId: string) {
  const { db } = await testServer();
  return db.orm.em.getConnection().execute<
    {
      cookie_id: string;
      landing_url: string | null;
      referrer: string | null;
      user_agent: string | null;
      ip: string | null;
    }[]
  >('select cookie_id, landing_url, referrer, user_agent, ip from clicks where organization_id = ?', [organizationId]);
}

describe('public click endpoint', () => {
  it('records the click as POST /api/clicks would and returns only the cookie id and its lifetime', async () => {
    const m = await createMerchant({ click_window_days: 45 });
    const res = await snippetPost(clicksPath(m.id), {
      ref: m.slug.toUpperCase(),
      landingUrl: 'https://shop.example.com/?ref=x',
      referrer: 'https://blog.example/',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        click: {
          cookie_id: expect.stringMatching(/^ck_[0-9A-Za-z]{22}$/),
          cookie_max_age_seconds: 45 * 86_400,
          kept: false,
          livemode: true,
        },
      },
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');

    const [row] = await clickRows(m.id);
    expect(row).toEqual({
      cookie_id: res.body.data.click.cookie_id,
      landing_url: 'https://shop.example.com/?ref=x',
      referrer: 'https://blog.example/',
      user_agent: BROWSER_UA,
      ip: '127.0.0.1',
    });

    // The cookie id attributes through the merchant API like any API-issued one.
    const customer = await m.api.post('/api/customers', {
      customer_id: unique('cus'),
      cookie_id: res.body.data.click.cookie_id,
    });
    expect(customer.status).toBe(201);
    expect(customer.body.data.customer.affiliate_id).toBe(m.affiliate.id);
    expect(customer.body.data.customer.click_id).not.toBeNull();
  });

  it('needs no API key, and ignores an Authorization header', async () => {
    const m = await createMerchant();
    expect((await snippetPost(clicksPath(m.id), { ref: m.slug })).status).toBe(201);
    expect(
      (await snippetPost(clicksPath(m.id), { ref: m.slug }, { authorization: 'Bearer svc-not-a-key' })).status,
    ).toBe(201);
  });

  it('accepts application/json too; other content types are 415, malformed JSON 400, oversized bodies 413', async () => {
    const m = await createMerchant();
    const json = await request('POST', clicksPath(m.id), {
      body: { ref: m.slug },
      headers: { 'user-agent': BROWSER_UA },
    });
    expect(json.status).toBe(201);
    expectError(
      await request('POST', clicksPath(m.id), {
        rawBody: `ref=${m.slug}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': BROWSER_UA },
      }),
      415,
      'Content-Type must be application/json (or text/plain holding JSON)',
    );
    expectError(
      await request('POST', clicksPath(m.id), {
        rawBody: '{"ref":',
        headers: { 'content-type': 'text/plain', 'user-agent': BROWSER_UA },
      }),
      400,
      'Malformed JSON body',
    );
    expectError(
      await snippetPost(clicksPath(m.id), { ref: m.slug, landingUrl: 'x'.repeat(17 * 1024) }),
      413,
      'Request body exceeds the 16 KiB limit',
    );
  });

  it('validates the input and names the field', async () => {
    const m = await createMerchant();
    expectError(await snippetPost(clicksPath(m.id), {}), 400, /ref/);
    expectError(await snippetPost(clicksPath(m.id), { ref: '' }), 400, /ref/);
    expectError(await snippetPost(clicksPath(m.id), { ref: m.slug, landingUrl: 'x'.repeat(2049) }), 400, /landingUrl/);
    expectError(await snippetPost(clicksPath('not-a-uuid'), { ref: m.slug }), 400, /organizationId/);
    expect(await clickRows(m.id)).toEqual([]);
  });

  it('an unknown organization answers exactly like an unknown ref: 404 "No attribution found"', async () => {
    const m = await createMerchant();
    const unknownRef = await snippetPost(clicksPath(m.id), { ref: 'no-such-partner' });
    const unknownOrg = await snippetPost(clicksPath('00000000-0000-4000-8000-000000000000'), { ref: m.slug });
    expectError(unknownRef, 404, 'No attribution found');
    expectError(unknownOrg, 404, 'No attribution found');
    expect(unknownOrg.body).toEqual(unknownRef.body);
  });

  it("never resolves another organization's affiliate", async () => {
    const a = await createMerchant();
    const b = await createMerchant();
    expectError(await snippetPost(clicksPath(a.id), { ref: b.slug }), 404, 'No attribution found');
    expect(await clickRows(a.id)).toEqual([]);
    expect(await clickRows(b.id)).toEqual([]);
  });

  it.each([
    ['Googlebot', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
    ['bingbot', 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)'],
    ['Facebook preview', 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)'],
    ['Slack unfurler', 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)'],
    ['curl', 'curl/8.5.0'],
    ['python-requests', 'python-requests/2.32.3'],
    [
      'Lighthouse',
      'Mozilla/5.0 (Linux; Android 11) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 Chrome-Lighthouse',
    ],
  ])('a bot user agent (%s) is answered 200 with click null and records nothing', async (_name, ua) => {
    const m = await createMerchant();
    const res = await snippetPost(clicksPath(m.id), { ref: m.slug }, { 'user-agent': ua });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { click: null } });
    expect(await clickRows(m.id)).toEqual([]);
  });

  it('a request without a user agent is not a visitor either', async () => {
    const m = await createMerchant();
    const res = await snippetPost(clicksPath(m.id), { ref: m.slug }, { 'user-agent': '' });
    expect(res.body).toEqual({ success: true, data: { click: null } });
    expect(await clickRows(m.id)).toEqual([]);
  });

  it.each([
    ['Chrome', BROWSER_UA],
    [
      'Safari iOS',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
    ],
    ['Firefox', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0'],
    [
      'a Cubot phone',
      'Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36',
    ],
    [
      'headless Chromium',
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36',
    ],
  ])('a browser (%s) is recorded', async (_name, ua) => {
    const m = await createMerchant();
    expect((await snippetPost(clicksPath(m.id), { ref: m.slug }, { 'user-agent': ua })).status).toBe(201);
  });
});

describe('public customer endpoint', () => {
  it('creates the same trial customer as POST /api/customers, answering only the customer id', async () => {
    const m = await createMerchant();
    const click = await snippetPost(clicksPath(m.id), { ref: m.slug });
    const cookieId = click.body.data.click.cookie_id;
    const customerId = unique('cus');
    const res = await snippetPost(customersPath(m.id), { customerId, cookieId });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: { customer: { customer_id: customerId, livemode: true } },
      deduped: false,
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');

    // What the merchant API creates from the same input, for comparison.
    const viaApiId = unique('cus');
    const viaApi = await m.api.post('/api/customers', { customer_id: viaApiId, cookie_id: cookieId, status: 'trial' });
    const viaSnippet = (await m.api.get(`/api/customers/${customerId}`)).body.data.customer;
    const strip = ({ id, customer_id, created_at, updated_at, ...rest }: Record<string, unknown>) => rest;
    expect(strip(viaSnippet)).toEqual(strip(viaApi.body.data.customer));
    expect(viaSnippet).toMatchObject({
      status: 'trial',
      affiliate_id: m.affiliate.id,
      program_id: m.program.id,
      click_id: expect.any(String),
    });
  });

  it('is idempotent on customerId: a repeat answers 200 deduped and changes nothing', async () => {
    const m = await createMerchant();
    const customerId = unique('cus');
    expect((await snippetPost(customersPath(m.id), { customerId, cookieId: m.slug })).status).toBe(201);
    await m.api.patch(`/api/customers/${customerId}`, { status: 'active' });
    const again = await snippetPost(customersPath(m.id), { customerId, cookieId: m.slug });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      success: true,
      data: { customer: { customer_id: customerId, livemode: true } },
      deduped: true,
    });
    expect((await m.api.get(`/api/customers/${customerId}`)).body.data.customer.status).toBe('active');
  });

  it("accepts the snippet's fallback (a raw slug) as cookieId", async () => {
    const m = await createMerchant();
    const customerId = unique('cus');
    expect((await snippetPost(customersPath(m.id), { customerId, cookieId: m.slug })).status).toBe(201);
    expect((await m.api.get(`/api/customers/${customerId}`)).body.data.customer).toMatchObject({
      affiliate_id: m.affiliate.id,
      click_id: null,
      status: 'trial',
    });
  });

  it('answers 404 "No attribution found" for cookies of another organization and for unknown organizations, revealing nothing', async () => {
    const a = await createMerchant();
    const b = await createMerchant();
    const bCookie = (await snippetPost(clicksPath(b.id), { ref: b.slug })).body.data.click.cookie_id;
    const customerId = unique('cus');
    expectError(await snippetPost(customersPath(a.id), { customerId, cookieId: bCookie }), 404, 'No attribution found');
    expectError(await snippetPost(customersPath(a.id), { customerId, cookieId: b.slug }), 404, 'No attribution found');
    expectError(
      await snippetPost(customersPath(a.id), { customerId, cookieId: 'ck_forgedforgedforgedforged' }),
      404,
      'No attribution found',
    );
    expectError(
      await snippetPost(customersPath('00000000-0000-4000-8000-000000000000'), { customerId, cookieId: bCookie }),
      404,
      'No attribution found',
    );
    // In test mode too: an unknown organization is answered as in live mode.
    expectError(
      await snippetPost(customersPath('00000000-0000-4000-8000-000000000000'), {
        customerId,
        cookieId: bCookie,
        mode: 'test',
      }),
      404,
      'No attribution found',
    );
    const unknownClick = await snippetPost(clicksPath('00000000-0000-4000-8000-000000000000'), {
      ref: b.slug,
      mode: 'test',
    });
    expect([unknownClick.status, unknownClick.body]).toEqual([
      404,
      (await snippetPost(clicksPath('00000000-0000-4000-8000-000000000000'), { ref: b.slug })).body,
    ]);
    expectError(await a.api.get(`/api/customers/${customerId}`), 404);

    // A customer id that exists in B: tracking it in A neither reads nor touches B's customer.
    expect((await snippetPost(customersPath(b.id), { customerId, cookieId: bCookie })).status).toBe(201);
    const inA = await snippetPost(customersPath(a.id), { customerId, cookieId: a.slug });
    expect(inA.status).toBe(201);
    expect(inA.body).toEqual({
      success: true,
      data: { customer: { customer_id: customerId, livemode: true } },
      deduped: false,
    });
    expect((await b.api.get(`/api/customers/${customerId}`)).body.data.customer.affiliate_id).toBe(b.affiliate.id);
    expect((await a.api.get(`/api/customers/${customerId}`)).body.data.customer.affiliate_id).toBe(a.affiliate.id);
  });

  it('410 when the click is older than the click window', async () => {
    const m = await createMerchant({ click_window_days: 0 });
    const cookieId = (await snippetPost(clicksPath(m.id), { ref: m.slug })).body.data.click.cookie_id;
    await new Promise((r) => setTimeout(r, 20));
    expectError(
      await snippetPost(customersPath(m.id), { customerId: unique('cus'), cookieId }),
      410,
      'Attribution window expired',
    );
  });

  it('validates customerId and cookieId', async () => {
    const m = await createMerchant();
    expectError(await snippetPost(customersPath(m.id), { cookieId: m.slug }), 400, /customerId/);
    expectError(await snippetPost(customersPath(m.id), { customerId: 'cus_1' }), 400, /cookieId/);
    expectError(
      await snippetPost(customersPath(m.id), { customerId: 'cus_1', cookieId: 'x'.repeat(256) }),
      400,
      /cookieId/,
    );
  });
});

describe('CORS', () => {
  it('answers preflights for any origin on the public endpoints', async () => {
    const m = await createMerchant();
    for (const path of [clicksPath(m.id), customersPath(m.id)]) {
      const res = await request('OPTIONS', path, {
        headers: {
          origin: 'https://any-merchant.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('errors of the public endpoints carry CORS headers too, so the snippet can read them', async () => {
    const org = await createOrganization();
    const res = await snippetPost(clicksPath(org.id), { ref: 'nobody' });
    expectError(res, 404, 'No attribution found');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('is not enabled on the merchant API', async () => {
    const org = await createOrganization();
    const preflight = await request('OPTIONS', '/api/customers', {
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const me = await request('GET', '/api/me', { key: org.key, headers: { origin: ORIGIN } });
    expect(me.status).toBe(200);
    expect(me.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('rate limiting per client address', () => {
  let baseUrl: string;
  let server: Server;

  beforeAll(async () => {
    const { db } = await testServer();
    // An app of its own with a small budget and a trusted proxy, on the worker's database.
    const { listener } = createApp({
      orm: db.orm,
      config: {
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL,
        API_KEY_CACHE_TTL_MS: 0,
        PUBLIC_RATE_LIMIT_MAX: 3,
        PUBLIC_RATE_LIMIT_WINDOW_SECONDS: 60,
        TRUST_PROXY: 'loopback',
      },
    });
    server = await new Promise<Server>((resolve) => {
      const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = async (path: string, body: unknown, address: string) => {
    const res = await fetch(baseUrl + path, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'text/plain', 'user-agent': BROWSER_UA, 'x-forwarded-for': address },
    });
    return { status: res.status, headers: res.headers, body: await res.json() };
  };

  it('answers 429 in the error envelope with Retry-After past the budget, per address and per endpoint', async () => {
    const m = await createMerchant();
    const address = '203.0.113.7';
    for (let i = 0; i < 3; i++) {
      const ok = await post(clicksPath(m.id), { ref: m.slug }, address);
      expect(ok.status).toBe(201);
      expect(ok.headers.get('ratelimit-limit')).toBe('3');
      expect(ok.headers.get('ratelimit-remaining')).toBe(String(2 - i));
    }
    const limited = await post(clicksPath(m.id), { ref: m.slug }, address);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ success: false, message: 'Too many requests; retry later' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(120);
    expect(limited.headers.get('access-control-allow-origin')).toBe('*');
    expect(limited.headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect(await clickRows(m.id)).toHaveLength(3);

    // Another address has its own budget; so has the customer endpoint for the same address.
    expect((await post(clicksPath(m.id), { ref: m.slug }, '198.51.100.20')).status).toBe(201);
    expect((await post(customersPath(m.id), { customerId: unique('cus'), cookieId: m.slug }, address)).status).toBe(
      201,
    );
    // Preflights do not count and are never refused.
    const preflight = await fetch(baseUrl + clicksPath(m.id), {
      method: 'OPTIONS',
      headers: { 'x-forwarded-for': address, origin: ORIGIN },
    });
    expect(preflight.status).toBe(204);
  });

  it('groups IPv6 clients by /64', async () => {
    const m = await createMerchant();
    for (let i = 1; i <= 3; i++)
      expect((await post(clicksPath(m.id), { ref: m.slug }, `2001:db8:1:2::${i}`)).status).toBe(201);
    expect((await post(clicksPath(m.id), { ref: m.slug }, '2001:db8:1:2:ffff::9')).status).toBe(429);
    expect((await post(clicksPath(m.id), { ref: m.slug }, '2001:db8:1:3::1')).status).toBe(201);
  });

  it('does not limit the merchant API', async () => {
    const org = await createOrganization();
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${baseUrl}/api/me`, {
        headers: { authorization: `Bearer ${org.key}`, 'x-forwarded-for': '203.0.113.99' },
      });
      expect(res.status).toBe(200);
    }
  });
});
