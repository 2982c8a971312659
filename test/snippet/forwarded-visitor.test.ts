/**
 * X-Visitor-IP on the public endpoints: the visitor's address a first-party proxy (the SDK's
 * createFirstPartyProxy, in the merchant's app) forwards. Trusted only with an API key of the
 * organization in the path; forged by anyone else, it changes nothing.
 */
import type { AddressInfo } from 'node:net';
import { type Server, createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { createMerchant, createOrganization, request } from '../support/api.js';
import { TEST_ADMIN_TOKEN, TEST_PUBLIC_BASE_URL, testServer } from '../support/server.js';

const BROWSER_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const clicksPath = (org: string) => `/public/organizations/${org}/clicks`;

function snippetPost(path: string, body: unknown, headers: Record<string, string> = {}) {
  return request('POST', path, {
    rawBody: JSON.stringify(body),
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': BROWSER_UA, ...headers },
  });
}

async function ipOfClick(cookieId: string): Promise<string | null> {
  const { db } = await testServer();
  const [row] = await db.orm.em
    .getConnection()
    .execute<{ ip: string | null }[]>('select ip from clicks where cookie_id = ?', [cookieId]);
  return row.ip;
}

describe('X-Visitor-IP: the visitor address of a first-party proxy', () => {
  it('with an API key of the organization in the path, the click carries the forwarded address', async () => {
    const m = await createMerchant();
    const res = await snippetPost(
      clicksPath(m.id),
      { ref: m.slug },
      { 'x-visitor-ip': '203.0.113.77', authorization: `Bearer ${m.key}` },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(await ipOfClick(res.body.data.click.cookie_id)).toBe('203.0.113.77');
    // The bare `svc-` form of the header works as on /api.
    const bare = await snippetPost(
      clicksPath(m.id),
      { ref: m.slug },
      { 'x-visitor-ip': '2001:db8::7', authorization: m.key },
    );
    expect(await ipOfClick(bare.body.data.click.cookie_id)).toBe('2001:db8::7');
  });

  it.each([
    ['without any key (a browser or a script sending the header)', () => ({})],
    ['with an invalid key', () => ({ authorization: 'Bearer svc-not-a-real-key-0000000000000000000000' })],
    ['with a malformed Authorization header', () => ({ authorization: 'Basic Zm9vOmJhcg==' })],
  ])(
    "forged %s: ignored, the click carries the request's own address, and the call still succeeds",
    async (_what, extra) => {
      const m = await createMerchant();
      const res = await snippetPost(clicksPath(m.id), { ref: m.slug }, { 'x-visitor-ip': '203.0.113.66', ...extra() });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(await ipOfClick(res.body.data.click.cookie_id)).toBe('127.0.0.1');
    },
  );

  it("with another organization's valid key: ignored (one merchant's key never speaks for another's visitors)", async () => {
    const m = await createMerchant();
    const other = await createOrganization();
    const res = await snippetPost(
      clicksPath(m.id),
      { ref: m.slug },
      { 'x-visitor-ip': '203.0.113.55', authorization: `Bearer ${other.key}` },
    );
    expect(res.status).toBe(201);
    expect(await ipOfClick(res.body.data.click.cookie_id)).toBe('127.0.0.1');
  });

  it('a value that is not an IP address is ignored even with the key', async () => {
    const m = await createMerchant();
    const res = await snippetPost(
      clicksPath(m.id),
      { ref: m.slug },
      { 'x-visitor-ip': 'evil.example, 1.2.3.4', authorization: `Bearer ${m.key}` },
    );
    expect(res.status).toBe(201);
    expect(await ipOfClick(res.body.data.click.cookie_id)).toBe('127.0.0.1');
  });

  it('a cross-origin page cannot send it: the CORS preflight allows neither X-Visitor-IP nor Authorization', async () => {
    const m = await createMerchant();
    const res = await request('OPTIONS', clicksPath(m.id), {
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-visitor-ip,authorization',
      },
    });
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    expect(allowed).not.toContain('x-visitor-ip');
    expect(allowed).not.toContain('authorization');
  });
});

describe('the per-address rate limit counts each forwarded visitor on its own, a forged header nobody', () => {
  let server: Server;
  let baseUrl: string;

  beforeAll(async () => {
    const { db } = await testServer();
    const { listener } = createApp({
      orm: db.orm,
      config: {
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL,
        API_KEY_CACHE_TTL_MS: 0,
        PUBLIC_RATE_LIMIT_MAX: 2,
        PUBLIC_RATE_LIMIT_WINDOW_SECONDS: 60,
      },
    });
    server = await new Promise<Server>((resolve) => {
      const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(baseUrl + path, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'text/plain', 'user-agent': BROWSER_UA, ...headers },
    });

  it("through the proxy (key + address), three visitors of one server make two calls each; forged addresses share the sender's budget", async () => {
    const m = await createMerchant();
    const statuses: number[] = [];
    for (const visitor of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
      for (let i = 0; i < 2; i++)
        statuses.push(
          (await post(clicksPath(m.id), { ref: m.slug }, { 'x-visitor-ip': visitor, authorization: `Bearer ${m.key}` }))
            .status,
        );
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 201]);
    expect(
      (
        await post(
          clicksPath(m.id),
          { ref: m.slug },
          { 'x-visitor-ip': '198.51.100.1', authorization: `Bearer ${m.key}` },
        )
      ).status,
    ).toBe(429);

    // Without the key, rotating the header does not escape the limit of the address that sends it.
    const forged: number[] = [];
    for (const visitor of ['192.0.2.1', '192.0.2.2', '192.0.2.3'])
      forged.push((await post(clicksPath(m.id), { ref: m.slug }, { 'x-visitor-ip': visitor })).status);
    expect(forged).toEqual([201, 201, 429]);
  });
});
