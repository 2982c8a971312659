/**
 * `referralCookie` (Fetch-style frameworks: a Request in, a Set-Cookie value out) and
 * `createReferralMiddleware` (node:http, Express, Connect) of `@affiliate-attribution/sdk/server`:
 * against the live service for what it records, and against scripted fetches for a slow, failing
 * or refusing service.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Fetch, FetchInit } from '../../client-sdk/src/index.js';
import { createReferralMiddleware, referralCookie, type ReferralOptions } from '../../client-sdk/src/server/index.js';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';

const CHROME_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const GOOGLEBOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const DAY = 86_400;
const SET_COOKIE = /^svc_aff=(ck_[0-9A-Za-z]{22}); Path=\/; Max-Age=(\d+); SameSite=Lax$/;

async function clickByCookie(cookieId: string) {
  const { db } = await testServer();
  return db.orm.em.getConnection().execute<
    {
      affiliate_id: string;
      landing_url: string | null;
      referrer: string | null;
      user_agent: string | null;
      ip: string | null;
    }[]
  >('select affiliate_id, landing_url, referrer, user_agent, ip from clicks where cookie_id = ?', [cookieId]);
}

async function clickCount(organizationId: string): Promise<number> {
  const { db } = await testServer();
  const [row] = await db.orm.em
    .getConnection()
    .execute<{ n: string }[]>('select count(*) as n from clicks where organization_id = ?', [organizationId]);
  return Number(row.n);
}

const visit = (url: string, headers: Record<string, string> = {}) =>
  new Request(url, { headers: { 'user-agent': CHROME_UA, ...headers } });

/** A fetch that records its calls and answers from a script; 'hang' never answers and ignores its AbortSignal. */
function scriptedFetch(reply: () => Response | Error | 'hang') {
  const calls: { url: string; init: FetchInit }[] = [];
  const fetch: Fetch = (url, init) => {
    calls.push({ url, init });
    const r = reply();
    if (r === 'hang') return new Promise<Response>(() => undefined);
    return r instanceof Error ? Promise.reject(r) : Promise.resolve(r);
  };
  return { fetch, calls };
}

const failing = (status: number, message: string) => () =>
  new Response(JSON.stringify({ success: false, message }), {
    status,
    headers: { 'content-type': 'application/json' },
  });

const silentLogger = () => {
  const lines: string[] = [];
  return { lines, logger: { warn: (message: string) => void lines.push(message) } };
};

describe('referralCookie (Fetch-style: Next.js middleware, Hono, Remix)', () => {
  afterEach(() => vi.restoreAllMocks());

  it("records the click with the visitor's address, user agent, landing URL and referrer, and answers the Set-Cookie with the program's lifetime", async () => {
    const merchant = await createMerchant({ click_window_days: 30 });
    const { baseUrl } = await testServer();
    const landing = `http://shop.example/pricing?ref=${merchant.slug}&utm_source=news`;
    const cookie = await referralCookie(visit(landing, { referer: 'https://partner.example/blog' }), {
      apiKey: merchant.key,
      baseUrl,
      ip: '203.0.113.7',
    });

    const [, cookieId, maxAge] = SET_COOKIE.exec(cookie ?? '') ?? [];
    expect(cookie, cookie).toMatch(SET_COOKIE);
    expect(Number(maxAge)).toBe(30 * DAY);
    expect(await clickByCookie(cookieId)).toEqual([
      {
        affiliate_id: merchant.affiliate.id,
        landing_url: landing,
        referrer: 'https://partner.example/blog',
        user_agent: CHROME_UA,
        ip: '203.0.113.7',
      },
    ]);
  });

  it('Secure on HTTPS, Domain with cookieDomain; the slug is read case- and space-insensitively, with a custom param', async () => {
    const merchant = await createMerchant();
    const { baseUrl } = await testServer();
    const cookie = await referralCookie(visit(`https://www.shop.example/?via=%20${merchant.slug.toUpperCase()}%20`), {
      apiKey: merchant.key,
      baseUrl,
      param: 'via',
      cookieDomain: '.shop.example',
    });
    expect(cookie).toMatch(
      /^svc_aff=ck_[0-9A-Za-z]{22}; Path=\/; Max-Age=5184000; Domain=\.shop\.example; SameSite=Lax; Secure$/,
    );
  });

  it('trustProxy reads the visitor from X-Forwarded-For (and HTTPS from X-Forwarded-Proto); without it the header is not believed', async () => {
    const merchant = await createMerchant();
    const { baseUrl } = await testServer();
    const headers = { 'x-forwarded-for': '198.51.100.23, 10.0.0.2', 'x-forwarded-proto': 'https' };
    const trusted = await referralCookie(visit(`http://shop.example/?ref=${merchant.slug}`, headers), {
      apiKey: merchant.key,
      baseUrl,
      trustProxy: true,
    });
    expect(trusted).toMatch(/; Secure$/);
    expect((await clickByCookie(SET_COOKIE.exec(trusted!.replace('; Secure', ''))![1]))[0].ip).toBe('198.51.100.23');

    const hops = await referralCookie(visit(`http://shop.example/?ref=${merchant.slug}`, headers), {
      apiKey: merchant.key,
      baseUrl,
      trustProxy: 1,
    });
    expect((await clickByCookie(SET_COOKIE.exec(hops!.replace('; Secure', ''))![1]))[0].ip).toBe('10.0.0.2');

    const untrusted = await referralCookie(visit(`http://shop.example/?ref=${merchant.slug}`, headers), {
      apiKey: merchant.key,
      baseUrl,
    });
    expect(untrusted).not.toMatch(/Secure/);
    expect((await clickByCookie(SET_COOKIE.exec(untrusted!)![1]))[0].ip).toBeNull();
  });

  it('no referral parameter, an empty one, a bot, a malformed slug or a POST: no call, nothing set', async () => {
    const { fetch, calls } = scriptedFetch(failing(500, 'should not be called'));
    const { lines, logger } = silentLogger();
    const options: ReferralOptions = { apiKey: 'svc-test', baseUrl: 'http://127.0.0.1:9', fetch, logger };
    expect(await referralCookie(visit('http://shop.example/pricing'), options)).toBeUndefined();
    expect(await referralCookie(visit('http://shop.example/?ref=%20'), options)).toBeUndefined();
    expect(
      await referralCookie(visit('http://shop.example/?ref=jane-doe', { 'user-agent': GOOGLEBOT_UA }), options),
    ).toBeUndefined();
    expect(await referralCookie(new Request('http://shop.example/?ref=jane-doe'), options)).toBeUndefined(); // no user agent: no browser
    expect(await referralCookie(visit('http://shop.example/?ref=%3Cscript%3E'), options)).toBeUndefined();
    expect(
      await referralCookie(
        new Request('http://shop.example/?ref=jane-doe', { method: 'POST', headers: { 'user-agent': CHROME_UA } }),
        options,
      ),
    ).toBeUndefined();
    // No click: at most the organization's link parameters were asked for (GET /api/me, cached), to
    // know whether `ref` is one of them; unanswered, `ref` is.
    expect(calls.filter((c) => c.init.method !== 'GET')).toEqual([]);
    expect(lines).toEqual(['ignoring malformed ref "<script>"']);
  });

  it('a bot records nothing on the live service either', async () => {
    const merchant = await createMerchant();
    const { baseUrl } = await testServer();
    expect(
      await referralCookie(visit(`http://shop.example/?ref=${merchant.slug}`, { 'user-agent': GOOGLEBOT_UA }), {
        apiKey: merchant.key,
        baseUrl,
      }),
    ).toBeUndefined();
    expect(await clickCount(merchant.id)).toBe(0);
  });

  it('a service that never answers (even ignoring its AbortSignal): resolves within timeoutMs with the raw slug for 60 days, and says so', async () => {
    const { fetch, calls } = scriptedFetch(() => 'hang');
    const { lines, logger } = silentLogger();
    const started = performance.now();
    const cookie = await referralCookie(visit('https://shop.example/?ref=Jane-Doe'), {
      apiKey: 'svc-test',
      baseUrl: 'http://127.0.0.1:9',
      fetch,
      logger,
      timeoutMs: 150,
    });
    const elapsed = performance.now() - started;
    expect(cookie).toBe('svc_aff=jane-doe; Path=/; Max-Age=5184000; SameSite=Lax; Secure');
    expect(calls).toHaveLength(1); // one attempt: a retry would hold the page
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(400);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/click for ref "jane-doe" not recorded \(.*\); the cookie holds the slug instead/);
  });

  it('the default budget is 500 ms', async () => {
    const { fetch } = scriptedFetch(() => 'hang');
    const started = performance.now();
    const cookie = await referralCookie(visit('http://shop.example/?ref=jane-doe'), {
      apiKey: 'svc-test',
      baseUrl: 'http://127.0.0.1:9',
      fetch,
      logger: silentLogger().logger,
    });
    const elapsed = performance.now() - started;
    expect(cookie).toBe('svc_aff=jane-doe; Path=/; Max-Age=5184000; SameSite=Lax');
    expect(elapsed).toBeGreaterThanOrEqual(490);
    expect(elapsed).toBeLessThan(900);
  });

  it.each([
    ['a 5xx', failing(503, 'Service temporarily unavailable; safe to retry')],
    ['a 429', failing(429, 'Too many requests')],
    ['a refused API key', failing(401, 'Missing or invalid API key')],
    [
      'a network error',
      () =>
        new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
        }),
    ],
    ['a body that is not JSON', () => new Response('<html>gateway</html>', { status: 502 })],
  ])('%s: the raw slug, never an exception', async (_what, reply) => {
    const { fetch } = scriptedFetch(reply);
    const cookie = await referralCookie(visit('http://shop.example/?ref=jane-doe'), {
      apiKey: 'svc-test',
      baseUrl: 'http://127.0.0.1:9',
      fetch,
      logger: silentLogger().logger,
    });
    expect(cookie).toBe('svc_aff=jane-doe; Path=/; Max-Age=5184000; SameSite=Lax');
  });

  it('a service that is down (nothing listens): the raw slug', async () => {
    const cookie = await referralCookie(visit('http://shop.example/?ref=jane-doe'), {
      apiKey: 'svc-test',
      baseUrl: 'http://127.0.0.1:9',
      logger: silentLogger().logger,
    });
    expect(cookie).toBe('svc_aff=jane-doe; Path=/; Max-Age=5184000; SameSite=Lax');
  });

  it('an unknown slug (404) sets nothing, as the snippet does: an earlier cookie stays', async () => {
    const merchant = await createMerchant();
    const { baseUrl } = await testServer();
    const { lines, logger } = silentLogger();
    const cookie = await referralCookie(
      visit('http://shop.example/?ref=nobody-here', { cookie: 'svc_aff=ck_earlier' }),
      { apiKey: merchant.key, baseUrl, logger },
    );
    expect(cookie).toBeUndefined();
    expect(lines).toEqual(['ref "nobody-here" not tracked: No attribution found']);
  });

  it("under first_click a visitor's valid cookie is kept: nothing set, so its lifetime is not stretched", async () => {
    const merchant = await createMerchant({ attribution_model: 'first_click' });
    const { baseUrl } = await testServer();
    const first = await referralCookie(visit(`http://shop.example/?ref=${merchant.slug}`), {
      apiKey: merchant.key,
      baseUrl,
    });
    const cookieId = SET_COOKIE.exec(first!)![1];
    // The same visit again (a reload): answered the visit's click, nothing recorded, nothing set.
    const reload = await referralCookie(
      visit(`http://shop.example/?ref=${merchant.slug}`, { cookie: `other=1; svc_aff=${cookieId}` }),
      { apiKey: merchant.key, baseUrl },
    );
    expect(reload).toBeUndefined();
    expect(await clickCount(merchant.id)).toBe(1);
    // A later visit, whose cookie is a click of an hour ago: recorded, and the cookie kept as it is.
    const earlier = await merchant.api.post('/api/clicks', {
      ref: merchant.slug,
      occurred_at: new Date(Date.now() - 3_600_000).toISOString(),
    });
    const later = await referralCookie(
      visit(`http://shop.example/?ref=${merchant.slug}`, { cookie: `svc_aff=${earlier.body.data.click.cookie_id}` }),
      { apiKey: merchant.key, baseUrl },
    );
    expect(later).toBeUndefined();
    expect(await clickCount(merchant.id)).toBe(3); // the later visit is still a click on record
  });

  it('the default logger (console.warn) says an outage once, not once per page view', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    // An answer first: what an earlier test of this worker said is forgotten once the service answers.
    let answer: () => Response = () =>
      new Response(
        JSON.stringify({
          success: true,
          data: { click: { cookie_id: 'ck_x', cookie_max_age_seconds: 60, kept_earlier_click: false } },
        }),
        { status: 201 },
      );
    const { fetch } = scriptedFetch(() => answer());
    expect(
      await referralCookie(visit('http://shop.example/?ref=jane-doe'), {
        apiKey: 'svc-test',
        baseUrl: 'http://127.0.0.1:9',
        fetch,
      }),
    ).toBe('svc_aff=ck_x; Path=/; Max-Age=60; SameSite=Lax');
    answer = failing(503, 'down');
    for (let i = 0; i < 3; i++) {
      expect(
        await referralCookie(visit('http://shop.example/?ref=jane-doe'), {
          apiKey: 'svc-test',
          baseUrl: 'http://127.0.0.1:9',
          fetch,
        }),
      ).toMatch(/^svc_aff=jane-doe;/);
    }
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0][0])).toMatch(
      /^\[affiliate-attribution\] click for ref "jane-doe" not recorded \(HTTP 503: down\)/,
    );
  });

  it('options it cannot use (no API key in this deployment): resolves undefined and says why, never rejects', async () => {
    const { lines, logger } = silentLogger();
    const cookie = await referralCookie(visit('http://shop.example/?ref=jane-doe'), {
      apiKey: '',
      baseUrl: 'http://127.0.0.1:9',
      logger,
    });
    expect(cookie).toBeUndefined();
    expect(lines[0]).toMatch(/^referralCookie: .*apiKey is required/);
  });
});

describe('createReferralMiddleware (node:http, Express, Connect)', () => {
  let server: Server;
  let shop: string;
  let middleware: ReturnType<typeof createReferralMiddleware>;
  let options: ReferralOptions;
  let merchant: Awaited<ReturnType<typeof createMerchant>>;

  beforeAll(async () => {
    merchant = await createMerchant({ click_window_days: 45 });
    options = { apiKey: merchant.key, baseUrl: (await testServer()).baseUrl };
    // A plain node:http app: the middleware, then the page, which sets a cookie of its own.
    server = createServer((req, res) =>
      middleware(req, res, () => {
        res.setHeader('Set-Cookie', [
          'session=abc; Path=/; HttpOnly',
          ...((res.getHeader('set-cookie') as string[] | undefined) ?? []),
        ]);
        res.end('<h1>page</h1>');
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    shop = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it("sets svc_aff on the page's response and records the click with the connection's address and the visitor's user agent", async () => {
    middleware = createReferralMiddleware(options);
    const res = await fetch(`${shop}/landing?ref=${merchant.slug}`, {
      headers: { 'user-agent': CHROME_UA, referer: 'https://partner.example/' },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('<h1>page</h1>');
    const cookies = res.headers.getSetCookie();
    expect(cookies[0]).toBe('session=abc; Path=/; HttpOnly');
    expect(cookies[1]).toMatch(SET_COOKIE);
    const [, cookieId, maxAge] = SET_COOKIE.exec(cookies[1])!;
    expect(Number(maxAge)).toBe(45 * DAY);
    expect(await clickByCookie(cookieId)).toEqual([
      {
        affiliate_id: merchant.affiliate.id,
        landing_url: `${shop}/landing?ref=${merchant.slug}`,
        referrer: 'https://partner.example/',
        user_agent: CHROME_UA,
        ip: '127.0.0.1',
      },
    ]);
  });

  it('with trustProxy the address is the one X-Forwarded-For names; without it, a forged header changes nothing', async () => {
    middleware = createReferralMiddleware({ ...options, trustProxy: true });
    const trusted = await fetch(`${shop}/?ref=${merchant.slug}`, {
      headers: { 'user-agent': CHROME_UA, 'x-forwarded-for': '198.51.100.99' },
    });
    expect((await clickByCookie(SET_COOKIE.exec(trusted.headers.getSetCookie()[1])![1]))[0].ip).toBe('198.51.100.99');

    middleware = createReferralMiddleware(options);
    const forged = await fetch(`${shop}/?ref=${merchant.slug}`, {
      headers: { 'user-agent': CHROME_UA, 'x-forwarded-for': '198.51.100.99' },
    });
    expect((await clickByCookie(SET_COOKIE.exec(forged.headers.getSetCookie()[1])![1]))[0].ip).toBe('127.0.0.1');
  });

  it('a page without the parameter, or a bot: served at once, nothing set, nothing recorded', async () => {
    middleware = createReferralMiddleware(options);
    const before = await clickCount(merchant.id);
    const plain = await fetch(`${shop}/pricing`, { headers: { 'user-agent': CHROME_UA } });
    expect(plain.headers.getSetCookie()).toEqual(['session=abc; Path=/; HttpOnly']);
    const bot = await fetch(`${shop}/?ref=${merchant.slug}`, { headers: { 'user-agent': GOOGLEBOT_UA } });
    expect(bot.headers.getSetCookie()).toEqual(['session=abc; Path=/; HttpOnly']);
    expect(await clickCount(merchant.id)).toBe(before);
  });

  it('a service that never answers: the page is served within timeoutMs with the slug cookie', async () => {
    middleware = createReferralMiddleware({
      ...options,
      timeoutMs: 200,
      fetch: scriptedFetch(() => 'hang').fetch,
      logger: silentLogger().logger,
    });
    const started = performance.now();
    const res = await fetch(`${shop}/?ref=${merchant.slug}`, { headers: { 'user-agent': CHROME_UA } });
    expect(performance.now() - started).toBeLessThan(600);
    expect(await res.text()).toBe('<h1>page</h1>');
    expect(res.headers.getSetCookie()[1]).toBe(`svc_aff=${merchant.slug}; Path=/; Max-Age=5184000; SameSite=Lax`);
  });

  it('a missing API key is refused when the app starts, not at a visit', () => {
    expect(() => createReferralMiddleware({ apiKey: '', baseUrl: 'http://127.0.0.1:9' })).toThrow(/apiKey is required/);
    expect(() => createReferralMiddleware({ apiKey: 'svc-x', baseUrl: 'not a url' })).toThrow(/not an absolute URL/);
  });
});
