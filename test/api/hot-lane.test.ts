import {
  request as httpRequest,
  createServer,
  type IncomingHttpHeaders,
  type RequestListener,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { memoryRateLimiter } from '../../server/src/http/rate-limit-flexible.js';
import { TEST_ADMIN_TOKEN, TEST_PUBLIC_BASE_URL, testServer } from '../support/server.js';
import { createMerchant } from '../support/api.js';

/**
 * The hot lane (server/src/http/hot-routes.ts) must answer exactly as Express does. Both serve
 * the same app on the worker's database: `express` is the Express application alone, `hot` is
 * the service's listener (hot lane first). Every case goes to both and the answers are compared:
 * status, body (generated ids and times aside) and headers (date, request id and the remaining
 * rate budget aside). `expressCalls` tells which requests the hot lane left to Express.
 */
interface Answer {
  status: number;
  body: unknown;
  headers: IncomingHttpHeaders;
}

function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  chunked = false,
): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: res.headers });
      });
    });
    req.on('error', reject);
    if (body !== undefined) {
      if (chunked) {
        const bytes = Buffer.from(body);
        req.write(bytes.subarray(0, 3));
        req.end(bytes.subarray(3));
      } else {
        req.end(body);
      }
    } else {
      req.end();
    }
  });
}

const GENERATED = [
  [/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, '<uuid>'],
  [/^ck_[A-Za-z0-9]{22}$/, '<cookie id>'],
  [/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/, '<time>'],
] as const;
/** Ids a case makes distinct per side (`hot_exp_…`, `hot_hot_…`), so that each side creates its own record. */
const PER_SIDE = /^hot_(exp|hot)_/;

function normalize(value: unknown): unknown {
  if (typeof value === 'string')
    return GENERATED.find(([pattern]) => pattern.test(value))?.[1] ?? value.replace(PER_SIDE, 'hot_<side>_');
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]));
  return value;
}

const VARYING_HEADERS = new Set(['date', 'x-request-id', 'ratelimit-remaining']);
const comparableHeaders = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => !VARYING_HEADERS.has(name))
      .sort(([a], [b]) => a.localeCompare(b)),
  );

describe('the hot lane answers as Express does', () => {
  const servers: Server[] = [];
  let expressBase: string;
  let hotBase: string;
  let expressCalls = 0;
  let merchant: Awaited<ReturnType<typeof createMerchant>>;
  let cookieId: string;

  async function listen(listener: RequestListener): Promise<string> {
    const server = createServer(listener).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    const { db } = await testServer();
    const { app, hotLane } = createApp({
      orm: db.orm,
      config: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL, API_KEY_CACHE_TTL_MS: 5_000 },
    });
    expressBase = await listen(app);
    hotBase = await listen(
      hotLane.listener((req, res) => {
        expressCalls++;
        app(req, res);
      }),
    );
    merchant = await createMerchant();
    const click = await merchant.api.post('/api/clicks', { ref: merchant.slug });
    cookieId = click.body.data.click.cookie_id;
  });

  afterAll(() => {
    for (const server of servers) server.close();
  });

  const auth = () => ({ authorization: `Bearer ${merchant.key}` });
  const json = (extra: Record<string, string> = {}) => ({ ...auth(), 'content-type': 'application/json', ...extra });

  /** The same request to both; their answers must match. Returns the hot lane's answer and whether Express served it. */
  async function compare(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: (side: 'express' | 'hot') => string | Buffer,
    chunked = false,
  ) {
    const viaExpress = await send(expressBase, method, path, headers, body?.('express'), chunked);
    const callsBefore = expressCalls;
    const viaHot = await send(hotBase, method, path, headers, body?.('hot'), chunked);
    expect({ status: viaHot.status, body: normalize(viaHot.body) }).toEqual({
      status: viaExpress.status,
      body: normalize(viaExpress.body),
    });
    expect(comparableHeaders(viaHot.headers)).toEqual(comparableHeaders(viaExpress.headers));
    return { answer: viaHot, servedByExpress: expressCalls > callsBefore };
  }

  it('GET /api/me: success, no key, an unknown key', async () => {
    const ok = await compare('GET', '/api/me', auth());
    expect(ok.answer.status).toBe(200);
    expect(ok.servedByExpress).toBe(false);
    expect((await compare('GET', '/api/me', {})).answer.status).toBe(401);
    expect((await compare('GET', '/api/me', { authorization: 'Bearer svc-not-a-key' })).answer.status).toBe(401);
  });

  it('POST /api/clicks: created, unknown slug, validation, NUL characters', async () => {
    const created = await compare('POST', '/api/clicks', json(), () =>
      JSON.stringify({ ref: merchant.slug, landing_url: 'https://shop.example.com/?ref=x' }),
    );
    expect(created.answer.status).toBe(201);
    expect(created.servedByExpress).toBe(false);
    expect(
      (await compare('POST', '/api/clicks', json(), () => JSON.stringify({ ref: 'nobody-here' }))).answer.status,
    ).toBe(404);
    expect(
      (await compare('POST', '/api/clicks', json(), () => JSON.stringify({ ref: 42, landing_url: 'x'.repeat(3000) })))
        .answer.status,
    ).toBe(400);
    expect(
      (await compare('POST', '/api/clicks', json(), () => JSON.stringify({ ref: `${merchant.slug}\u0000` }))).answer
        .status,
    ).toBe(400);
  });

  it('bodies: malformed JSON, a scalar, an array, empty, a byte order mark, a UTF-8 charset', async () => {
    for (const raw of ['{"ref":', '"just a string"', '[]', '  ', '']) {
      const { answer, servedByExpress } = await compare('POST', '/api/clicks', json(), () => raw);
      expect(answer.status, raw).toBe(400);
      expect(servedByExpress).toBe(false);
    }
    const bom = await compare('POST', '/api/clicks', json(), () =>
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ ref: merchant.slug }))]),
    );
    expect(bom.answer.status).toBe(201);
    const charset = await compare(
      'POST',
      '/api/clicks',
      json({ 'content-type': 'application/json; charset=UTF-8' }),
      () => JSON.stringify({ ref: merchant.slug }),
    );
    expect(charset.answer.status).toBe(201);
    expect(charset.servedByExpress).toBe(false);
  });

  it('headers before the body: a bad key with malformed JSON is 401; then UTF-8, then JSON', async () => {
    // The key is checked before the body is read (so an unauthenticated body is never buffered):
    // a malformed body with a bad or missing key is 401 now, where it was 400 when parsing came first.
    for (const headers of [
      { authorization: 'Bearer svc-not-a-key', 'content-type': 'application/json' },
      { 'content-type': 'application/json' },
    ] as Record<string, string>[]) {
      const refused = await compare('POST', '/api/clicks', headers, () => '{"ref":');
      expect([refused.answer.status, refused.servedByExpress]).toEqual([401, false]);
    }
    const notUtf8 = await compare('POST', '/api/clicks', json(), () =>
      Buffer.concat([Buffer.from('{"ref":"'), Buffer.from([0xff]), Buffer.from('"}')]),
    );
    expect([notUtf8.answer.status, notUtf8.answer.body, notUtf8.servedByExpress]).toEqual([
      400,
      { success: false, message: 'Body is not valid UTF-8' },
      false,
    ]);
    const longEnum = await compare('POST', '/api/conversions', json(), () =>
      JSON.stringify({ external_id: 'hot_long', amount: 1, ref: merchant.slug, kind: 'k'.repeat(100_000) }),
    );
    expect([longEnum.answer.status, (longEnum.answer.body as { message: string }).message.length < 200]).toEqual([
      400,
      true,
    ]);
  });

  it('POST /api/customers and /api/conversions: created, then the repeat deduped', async () => {
    for (const [path, body] of [
      ['/api/customers', (side: string) => ({ customer_id: `hot_${side.slice(0, 3)}_cus`, cookie_id: cookieId })],
      [
        '/api/conversions',
        (side: string) => ({ external_id: `hot_${side.slice(0, 3)}_ord`, amount: 49.99, cookie_id: cookieId }),
      ],
      [
        '/api/conversions',
        (side: string) => ({
          external_id: `hot_${side.slice(0, 3)}_renewal`,
          amount: 19.99,
          customer_id: `hot_${side.slice(0, 3)}_cus`,
        }),
      ],
    ] as const) {
      const first = await compare('POST', path, json(), (side) => JSON.stringify(body(side)));
      expect(first.answer.status, path).toBe(201);
      expect(first.servedByExpress).toBe(false);
      const repeat = await compare('POST', path, json(), (side) => JSON.stringify(body(side)));
      expect(repeat.answer.status, path).toBe(200);
      expect((repeat.answer.body as { deduped: boolean }).deduped).toBe(true);
    }
    const unattributed = await compare('POST', '/api/conversions', json(), () =>
      JSON.stringify({ external_id: 'hot_none', amount: 1 }),
    );
    expect(unattributed.answer.status).toBe(400);
  });

  it('a test key (svc_test_): /api/me and the hot writes answer the same in both lanes, livemode false, in the test data', async () => {
    const test = (extra: Record<string, string> = {}) => ({
      authorization: `Bearer ${merchant.testKey}`,
      'content-type': 'application/json',
      ...extra,
    });
    const me = await compare('GET', '/api/me', { authorization: `Bearer ${merchant.testKey}` });
    expect([me.answer.status, me.servedByExpress, me.answer.body]).toEqual([
      200,
      false,
      {
        success: true,
        data: { organization: { id: merchant.id, name: merchant.name, livemode: false, link_params: ['ref'] } },
      },
    ]);
    // The live slug is not a test slug: the test data has its own programs and affiliates.
    expect(
      (await compare('POST', '/api/clicks', test(), () => JSON.stringify({ ref: merchant.slug }))).answer.status,
    ).toBe(404);
    const program = await merchant.testApi.post('/api/programs', { name: 'Test', commission_value: 10 });
    const slug = `hot-test-${Date.now()}`;
    expect(
      (
        await merchant.testApi.post('/api/affiliates', {
          email: `${slug}@example.com`,
          program_id: program.body.data.program.id,
          slug,
        })
      ).status,
    ).toBe(201);
    const click = await compare('POST', '/api/clicks', test(), () => JSON.stringify({ ref: slug }));
    expect([
      click.answer.status,
      click.servedByExpress,
      (click.answer.body as { data: { click: { livemode: boolean } } }).data.click.livemode,
    ]).toEqual([201, false, false]);
    for (const [path, body] of [
      ['/api/customers', (side: string) => ({ customer_id: `hot_${side.slice(0, 3)}_tcus`, ref: slug })],
      [
        '/api/conversions',
        (side: string) => ({
          external_id: `hot_${side.slice(0, 3)}_tord`,
          amount: 10,
          customer_id: `hot_${side.slice(0, 3)}_tcus`,
        }),
      ],
    ] as const) {
      const created = await compare('POST', path, test(), (side) => JSON.stringify(body(side)));
      expect([created.answer.status, created.servedByExpress], path).toEqual([201, false]);
      expect(JSON.stringify(created.answer.body), path).toContain('"livemode":false');
    }
  });

  it('lone UTF-16 surrogates in ids: the same 400 naming the field in both lanes, nothing stored', async () => {
    const lone = (field: string) => ({
      success: false,
      message: `${field}: ill-formed Unicode (a lone UTF-16 surrogate) is not allowed`,
    });
    for (const id of ['sur\ud800', 'sur\udbff']) {
      // JSON.stringify writes a lone surrogate as its \u escape: the body is valid UTF-8 JSON.
      const cases: [string, Record<string, unknown>, string][] = [
        ['/api/clicks', { ref: id }, 'ref'],
        ['/api/clicks', { ref: merchant.slug, cookie_id: id }, 'cookie_id'],
        ['/api/customers', { customer_id: id, cookie_id: cookieId }, 'customer_id'],
        ['/api/customers', { customer_id: 'hot_lone_cus', cookie_id: id }, 'cookie_id'],
        ['/api/conversions', { external_id: id, amount: 10, cookie_id: cookieId }, 'external_id'],
        ['/api/conversions', { external_id: 'hot_lone_ord', amount: 10, customer_id: id }, 'customer_id'],
      ];
      for (const [path, body, field] of cases) {
        const { answer, servedByExpress } = await compare('POST', path, json(), () => JSON.stringify(body));
        expect([answer.status, answer.body, servedByExpress], `${path} ${field}`).toEqual([400, lone(field), false]);
      }
    }
    // This merchant's own list (another test file's organization may hold a 'sur\ufffd' of its
    // own in the shared database, which a lookup by id answers 403): no id of these cases.
    const listed = await merchant.api.get('/api/conversions?limit=100');
    expect(listed.status).toBe(200);
    const ids = (listed.body.data.conversions as { external_id: string }[]).map((c) => c.external_id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.filter((id) => id.startsWith('sur') || id === 'hot_lone_ord')).toEqual([]);
  });

  it('echoes a sane X-Request-Id as Express does', async () => {
    const { answer } = await compare('GET', '/api/me', { ...auth(), 'x-request-id': 'trace-123' });
    expect(answer.headers['x-request-id']).toBe('trace-123');
  });

  it('leaves to Express what it does not serve in the plain form: other content types, chunked bodies, query strings, HEAD', async () => {
    const cases: [string, string, Record<string, string>, (() => string) | undefined, boolean][] = [
      [
        'POST',
        '/api/clicks',
        json({ 'content-type': 'text/plain' }),
        () => JSON.stringify({ ref: merchant.slug }),
        false,
      ],
      [
        'POST',
        '/api/clicks',
        json({ 'content-type': 'application/json; charset=latin1' }),
        () => JSON.stringify({ ref: merchant.slug }),
        false,
      ],
      ['POST', '/api/clicks', json(), () => JSON.stringify({ ref: merchant.slug }), true],
      ['POST', '/api/clicks?source=x', json(), () => JSON.stringify({ ref: merchant.slug }), false],
      ['HEAD', '/api/me', auth(), undefined, false],
    ];
    for (const [method, path, headers, body, chunked] of cases) {
      const callsBefore = expressCalls;
      const answer = await send(hotBase, method, path, headers, body?.(), chunked);
      expect(answer.status).toBeLessThan(500);
      expect(expressCalls, `${method} ${path} ${JSON.stringify(headers)}`).toBe(callsBefore + 1);
    }
  });

  it('refuses over the per-key rate limit with the same 429, Retry-After and budget headers', async () => {
    const { db } = await testServer();
    const limiter = memoryRateLimiter({ limit: 1, windowSeconds: 60 });
    const { app, listener } = createApp({
      orm: db.orm,
      config: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL, API_KEY_CACHE_TTL_MS: 5_000 },
      apiKeyRateLimiter: limiter,
    });
    const [viaExpress, viaHot] = [await listen(app), await listen(listener)];
    expect((await send(viaExpress, 'GET', '/api/me', auth())).status).toBe(200);
    const refusedByExpress = await send(viaExpress, 'GET', '/api/me', auth());
    const refusedByHot = await send(viaHot, 'GET', '/api/me', auth());
    expect(refusedByHot.status).toBe(429);
    expect(refusedByHot.body).toEqual(refusedByExpress.body);
    expect(comparableHeaders(refusedByHot.headers)).toEqual(comparableHeaders(refusedByExpress.headers));
    expect(refusedByHot.headers['retry-after']).toMatch(/^\d+$/);
    // The rate limit, like the key, comes before the body is read: a malformed body over the limit is 429.
    const malformed = (base: string) => send(base, 'POST', '/api/clicks', json(), '{"ref":');
    const [malformedByExpress, malformedByHot] = [await malformed(viaExpress), await malformed(viaHot)];
    expect([malformedByHot.status, malformedByHot.body]).toEqual([429, malformedByExpress.body]);
    expect(comparableHeaders(malformedByHot.headers)).toEqual(comparableHeaders(malformedByExpress.headers));
  });
});
