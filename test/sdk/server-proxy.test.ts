/**
 * createFirstPartyProxy of `@affiliate-attribution/sdk/server` on node:http and Express: what it
 * serves, what it passes on to the service (and what it never does), and how it answers when the
 * service cannot. The browser's view is in test/snippet/server-side-tracking.test.ts.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FetchInit } from '../../client-sdk/src/index.js';
import { createFirstPartyProxy, type ServerFetch } from '../../client-sdk/src/server/index.js';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';

const CHROME_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const servers: Server[] = [];

async function serve(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

function recordingFetch(reply: (url: string) => Response | Error) {
  const calls: { url: string; init: FetchInit }[] = [];
  const fetch: ServerFetch = async (url, init) => {
    calls.push({ url, init });
    const r = reply(url);
    if (r instanceof Error) throw r;
    return r;
  };
  return { fetch, calls };
}

const clickAnswer = (click: object) =>
  new Response(JSON.stringify({ success: true, data: { click } }), {
    status: 201,
    headers: { 'content-type': 'application/json; charset=utf-8', 'ratelimit-remaining': '59' },
  });
const quiet = { warn: () => undefined };
const ORG = '3f2b8c1e-7d4a-4e9b-8a61-2c5d9f0e4b7a';

describe('createFirstPartyProxy', () => {
  it('serves the service snippet under the prefix, with its ETag (304 on revalidation), and leaves every other path to next()', async () => {
    const { baseUrl } = await testServer();
    const proxy = createFirstPartyProxy({ baseUrl, prefix: '/p/', logger: quiet });
    const shop = await serve((req, res) => proxy(req, res, () => res.end('the app')));
    const snippet = await fetch(`${shop}/p/snippet.js`);
    expect(snippet.status).toBe(200);
    expect(snippet.headers.get('content-type')).toMatch(/javascript/);
    expect(await snippet.text()).toContain('svc_aff');
    const etag = snippet.headers.get('etag')!;
    expect(etag).toMatch(/^"/);
    expect((await fetch(`${shop}/p/snippet.js`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect(await (await fetch(`${shop}/pricing`)).text()).toBe('the app');
    expect(await (await fetch(`${shop}/p/other`)).text()).toBe('the app');
    expect(await (await fetch(`${shop}/p/public/organizations/${ORG}/clicks`)).text()).toBe('the app'); // a GET is not forwarded
  });

  it('without next() (plain node:http), a path of its own it does not serve is 404', async () => {
    const proxy = createFirstPartyProxy({ baseUrl: 'http://127.0.0.1:9', logger: quiet });
    const shop = await serve((req, res) => proxy(req, res));
    const res = await fetch(`${shop}/_aff/nothing`);
    expect(res.status).toBe(404);
  });

  it('keeps serving the snippet it holds while the service is unreachable', async () => {
    let up = true;
    const { fetch: serviceFetch } = recordingFetch(() =>
      up
        ? new Response('/*snippet*/', { headers: { 'content-type': 'application/javascript', etag: '"v1"' } })
        : new TypeError('fetch failed'),
    );
    const proxy = createFirstPartyProxy({ baseUrl: 'https://svc.example', fetch: serviceFetch, logger: quiet });
    const shop = await serve((req, res) => proxy(req, res));
    expect(await (await fetch(`${shop}/_aff/snippet.js`)).text()).toBe('/*snippet*/');
    up = false;
    const later = Date.now() + 6 * 60_000; // past the five minutes a copy is held before it is refreshed
    vi.spyOn(Date, 'now').mockReturnValue(later);
    const res = await fetch(`${shop}/_aff/snippet.js`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('/*snippet*/');
  });

  it("forwards a click with the key and the visitor's address, never the visitor's cookies, credentials or own X-Visitor-IP; the answer's cookie is the merchant origin's Set-Cookie", async () => {
    const { fetch: serviceFetch, calls } = recordingFetch(() =>
      clickAnswer({ cookie_id: 'ck_new', cookie_max_age_seconds: 86_400, kept: false }),
    );
    const proxy = createFirstPartyProxy({
      baseUrl: 'https://svc.example/base/',
      apiKey: 'svc-key',
      cookieDomain: '.shop.example',
      fetch: serviceFetch,
      logger: quiet,
    });
    const shop = await serve((req, res) => proxy(req, res));
    const res = await fetch(`${shop}/_aff/public/organizations/${ORG}/clicks`, {
      method: 'POST',
      body: '{"ref":"jane-doe"}',
      headers: {
        'content-type': 'text/plain;charset=UTF-8',
        'user-agent': CHROME_UA,
        cookie: 'session=secret; svc_aff=ck_old',
        authorization: 'Basic c2VjcmV0',
        'x-visitor-ip': '6.6.6.6',
      },
    });
    expect(res.status).toBe(201);
    expect(res.headers.getSetCookie()).toEqual([
      'svc_aff=ck_new; Path=/; Max-Age=86400; Domain=.shop.example; SameSite=Lax',
    ]);
    expect(res.headers.get('ratelimit-remaining')).toBe('59');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({
      success: true,
      data: { click: { cookie_id: 'ck_new', cookie_max_age_seconds: 86_400, kept: false } },
    });
    expect(calls).toHaveLength(1);
    expect(calls[0].url).toBe(`https://svc.example/base/public/organizations/${ORG}/clicks`);
    expect(calls[0].init.method).toBe('POST');
    expect(calls[0].init.body).toBe('{"ref":"jane-doe"}');
    expect(calls[0].init.headers).toEqual({
      'content-type': 'text/plain;charset=UTF-8',
      'user-agent': CHROME_UA,
      authorization: 'Bearer svc-key',
      'x-visitor-ip': '127.0.0.1',
    });
  });

  it('a kept click sets nothing (the lifetime is not stretched); Secure behind a trusted HTTPS proxy', async () => {
    let answer = { cookie_id: 'ck_old', cookie_max_age_seconds: 86_400, kept: true };
    const { fetch: serviceFetch, calls } = recordingFetch(() => clickAnswer(answer));
    const proxy = createFirstPartyProxy({
      baseUrl: 'https://svc.example',
      apiKey: 'svc-key',
      trustProxy: true,
      fetch: serviceFetch,
      logger: quiet,
    });
    const shop = await serve((req, res) => proxy(req, res));
    const post = () =>
      fetch(`${shop}/_aff/public/organizations/${ORG}/clicks`, {
        method: 'POST',
        body: '{"ref":"jane-doe","cookieId":"ck_old"}',
        headers: { cookie: 'svc_aff=ck_old', 'x-forwarded-for': '198.51.100.4', 'x-forwarded-proto': 'https' },
      });
    expect((await post()).headers.getSetCookie()).toEqual([]);
    answer = { cookie_id: 'ck_new', cookie_max_age_seconds: 86_400, kept: false };
    expect((await post()).headers.getSetCookie()).toEqual([
      'svc_aff=ck_new; Path=/; Max-Age=86400; SameSite=Lax; Secure',
    ]);
    expect(calls[1].init.headers['x-visitor-ip']).toBe('198.51.100.4');
  });

  it('a body over 16 KiB is refused without a call; an unreachable service is a 502 the snippet falls back on', async () => {
    const { fetch: serviceFetch, calls } = recordingFetch(() => new TypeError('fetch failed'));
    const proxy = createFirstPartyProxy({
      baseUrl: 'https://svc.example',
      apiKey: 'svc-key',
      fetch: serviceFetch,
      logger: quiet,
    });
    const shop = await serve((req, res) => proxy(req, res));
    const big = await fetch(`${shop}/_aff/public/organizations/${ORG}/clicks`, {
      method: 'POST',
      body: 'x'.repeat(17 * 1024),
    });
    expect(big.status).toBe(413);
    expect(calls).toEqual([]);
    const down = await fetch(`${shop}/_aff/public/organizations/${ORG}/clicks`, {
      method: 'POST',
      body: '{"ref":"jane-doe"}',
    });
    expect(down.status).toBe(502);
    expect(await down.json()).toEqual({
      success: false,
      message: 'The affiliate attribution service did not answer; the snippet stores the referral itself',
    });
    expect(down.headers.getSetCookie()).toEqual([]);
  });

  it('in Express after body parsers that already read the body, against the live service', async () => {
    const merchant = await createMerchant({ click_window_days: 20 });
    const { baseUrl } = await testServer();
    const app = express();
    app.use(express.json(), express.text());
    app.use(createFirstPartyProxy({ baseUrl, apiKey: merchant.key, logger: quiet }));
    const shop = await serve(app);
    const res = await fetch(`${shop}/_aff/public/organizations/${merchant.id}/clicks`, {
      method: 'POST',
      body: JSON.stringify({ ref: merchant.slug }),
      headers: { 'content-type': 'text/plain', 'user-agent': CHROME_UA },
    });
    expect(res.status).toBe(201);
    expect(res.headers.getSetCookie()[0]).toMatch(
      /^svc_aff=ck_[0-9A-Za-z]{22}; Path=\/; Max-Age=1728000; SameSite=Lax$/,
    );
  });
});
