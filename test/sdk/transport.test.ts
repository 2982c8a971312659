import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APIError,
  AttributionNotFoundError,
  AttributionWindowExpiredError,
  AuthenticationError,
  Client,
  ConflictError,
  ConnectionError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  TimeoutError,
  UserAbortError,
  ValidationError,
  type Fetch,
  type FetchInit,
} from '../../client-sdk/src/index.js';
import { retryDelayMs } from '../../client-sdk/src/core/transport.js';
import { rejection } from '../support/rejection.js';

interface Call {
  url: string;
  init: FetchInit;
}

type Reply = Response | Error | 'hang';

/** A fetch answering from a script, recording every call. 'hang' waits until the request is aborted. */
function scriptedFetch(...replies: Reply[]): { fetch: Fetch; calls: Call[] } {
  const calls: Call[] = [];
  const fetch: Fetch = (url, init) => {
    calls.push({ url, init });
    const reply = replies.length > 1 ? replies.shift()! : replies[0];
    if (reply === 'hang') {
      return new Promise((_resolve, reject) => {
        init.signal.addEventListener(
          'abort',
          () => reject(new DOMException('This operation was aborted', 'AbortError')),
          { once: true },
        );
      });
    }
    if (reply instanceof Error) return Promise.reject(reply);
    return Promise.resolve(reply.clone());
  };
  return { fetch, calls };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

const ok = (data: unknown, extra: Record<string, unknown> = {}) => json(200, { success: true, data, ...extra });
const fail = (status: number, message: string, headers: Record<string, string> = {}) =>
  json(status, { success: false, message }, headers);
const me = { organization: { id: '3f1c1c5e-8a4b-4c55-9d53-2c2a1b7e9d10', name: 'Acme' } };

function networkError(code: string): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(`connect ${code}`), { code }) });
}

function client(fetch: Fetch, options: { maxRetries?: number; timeoutMs?: number } = {}) {
  return new Client({ apiKey: 'svc-test', baseUrl: 'https://affiliates.example.com', fetch, ...options });
}

describe('requests the SDK sends', () => {
  it('authorization, JSON body, user agent and one request id', async () => {
    const { fetch, calls } = scriptedFetch(
      json(201, { success: true, data: { customer: { id: 'c' } }, deduped: false }),
    );
    const result = await client(fetch).customers.create({ customer_id: 'cus_1', cookie_id: 'ck_1' });
    expect(result).toEqual({ customer: { id: 'c' }, deduped: false });
    expect(calls).toHaveLength(1);
    const [{ url, init }] = calls;
    expect(url).toBe('https://affiliates.example.com/api/customers');
    expect(init.method).toBe('POST');
    expect(JSON.parse(init.body!)).toEqual({ customer_id: 'cus_1', cookie_id: 'ck_1' });
    expect(init.headers.authorization).toBe('Bearer svc-test');
    expect(init.headers['content-type']).toBe('application/json');
    expect(init.headers.accept).toBe('application/json');
    expect(init.headers['user-agent']).toMatch(/^affiliate-attribution-sdk-node\/\d+\.\d+\.\d+ node\/\d+\.\d+/);
    expect(init.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('GET requests carry no body; path parameters are encoded; queries skip undefined', async () => {
    const { fetch, calls } = scriptedFetch(ok({ customer: {} }), ok({ conversions: [], next_cursor: null }));
    const sdk = new Client({ apiKey: 'svc-test', baseUrl: 'https://example.com/affiliates/', fetch });
    await sdk.customers.get('cus/1 ?&');
    await sdk.conversions.list({ customer_id: 'a&b', limit: 5, affiliate_id: undefined });
    expect(calls[0].url).toBe('https://example.com/affiliates/api/customers/cus%2F1%20%3F%26');
    expect(calls[0].init.body).toBeUndefined();
    expect(calls[0].init.headers['content-type']).toBeUndefined();
    expect(calls[1].url).toBe('https://example.com/affiliates/api/conversions?customer_id=a%26b&limit=5');
  });

  it('client and per-request headers are sent, but never override the key or the request id', async () => {
    const { fetch, calls } = scriptedFetch(ok(me));
    const sdk = new Client({
      apiKey: 'svc-test',
      baseUrl: 'https://x.example',
      fetch,
      headers: { 'X-Tenant': 't1', Authorization: 'nope' },
    });
    await sdk.me({ headers: { 'x-trace': 'abc', 'X-Request-Id': 'theirs' }, requestId: 'mine-1' });
    expect(calls[0].init.headers).toMatchObject({
      'x-tenant': 't1',
      'x-trace': 'abc',
      authorization: 'Bearer svc-test',
      'x-request-id': 'mine-1',
    });
    expect(Object.keys(calls[0].init.headers).filter((name) => name.toLowerCase() === 'authorization')).toEqual([
      'authorization',
    ]);
    expect(Object.keys(calls[0].init.headers).filter((name) => name.toLowerCase() === 'x-request-id')).toEqual([
      'x-request-id',
    ]);
  });
});

describe('errors: one class per status family', () => {
  it.each([
    [400, 'amount: Expected number, received string', ValidationError],
    [401, 'Missing or invalid API key', AuthenticationError],
    [403, 'This resource belongs to another organization', PermissionDeniedError],
    [404, 'Not found', NotFoundError],
    [404, 'No attribution found', AttributionNotFoundError],
    [409, 'Slug already taken', ConflictError],
    [410, 'Attribution window expired', AttributionWindowExpiredError],
    [413, 'Request body exceeds the 1 MiB limit', APIError],
  ] as const)('%i %s', async (status, message, ErrorClass) => {
    const { fetch, calls } = scriptedFetch(fail(status, message, { 'x-request-id': 'req-from-server' }));
    const err = await rejection(client(fetch).me());
    expect(err).toBeInstanceOf(ErrorClass);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).constructor).toBe(ErrorClass);
    expect(err).toMatchObject({ status, message, requestId: 'req-from-server', name: ErrorClass.name });
    expect(calls).toHaveLength(1); // 4xx are not retried
  });

  it('a non-JSON error page (a proxy) still maps by status, with the text in the message', async () => {
    const { fetch } = scriptedFetch(
      new Response('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }),
    );
    const err = await rejection(client(fetch, { maxRetries: 0 }).me());
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).message).toBe('HTTP 502 Bad Gateway: <html>Bad gateway</html>');
    expect((err as InternalServerError).body).toBe('<html>Bad gateway</html>');
  });

  it('a 2xx that is not JSON is an APIError, not a crash', async () => {
    const { fetch } = scriptedFetch(new Response('OK', { status: 200 }));
    await expect(client(fetch).me()).rejects.toThrow(/Unexpected response body/);
  });
});

describe('retries', () => {
  it('5xx is retried with the same request id until it succeeds', async () => {
    const { fetch, calls } = scriptedFetch(
      fail(500, 'Internal server error'),
      fail(503, 'Service temporarily unavailable; safe to retry', { 'retry-after': '0' }),
      ok(me),
    );
    const started = Date.now();
    await expect(client(fetch).me()).resolves.toEqual(me);
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.init.headers['x-request-id'])).size).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350); // one backoff of 375..500 ms, then Retry-After 0
  });

  it('gives up after maxRetries and throws the last error', async () => {
    const { fetch, calls } = scriptedFetch(fail(500, 'Internal server error'));
    const err = await rejection(client(fetch, { maxRetries: 1 }).me());
    expect(err).toBeInstanceOf(InternalServerError);
    expect(calls).toHaveLength(2);
  });

  it('maxRetries: 0 per request disables retries', async () => {
    const { fetch, calls } = scriptedFetch(fail(503, 'busy'));
    await expect(client(fetch).me({ maxRetries: 0 })).rejects.toBeInstanceOf(InternalServerError);
    expect(calls).toHaveLength(1);
  });

  it('429 honours Retry-After', async () => {
    const { fetch, calls } = scriptedFetch(fail(429, 'Too many requests; retry later', { 'retry-after': '1' }), ok(me));
    const started = Date.now();
    await expect(client(fetch).me()).resolves.toEqual(me);
    expect(calls).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('429 with a Retry-After beyond a minute throws RateLimitError at once', async () => {
    const { fetch, calls } = scriptedFetch(fail(429, 'Too many requests; retry later', { 'retry-after': '120' }));
    const err = await rejection(client(fetch).me());
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterSeconds).toBe(120);
    expect(calls).toHaveLength(1);
  });

  it('connection errors are retried, then thrown as ConnectionError with the cause', async () => {
    const { fetch, calls } = scriptedFetch(networkError('ECONNRESET'), ok(me));
    await expect(client(fetch).me()).resolves.toEqual(me);
    expect(calls).toHaveLength(2);

    const failing = scriptedFetch(networkError('ECONNRESET'));
    const err = await rejection(client(failing.fetch, { maxRetries: 1 }).me());
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).not.toBeInstanceOf(TimeoutError);
    expect((err as ConnectionError).status).toBeUndefined();
    expect((err as ConnectionError).requestId).toBe(failing.calls[0].init.headers['x-request-id']);
    expect((err as ConnectionError).message).toMatch(/ECONNRESET/);
    expect((err as Error).cause).toBeInstanceOf(TypeError);
    expect(failing.calls).toHaveLength(2);
  });

  it('writes idempotent on a business key are retried after an ambiguous failure', async () => {
    const { fetch, calls } = scriptedFetch(
      networkError('ECONNRESET'),
      json(200, { success: true, data: { conversion: {} }, deduped: true }),
    );
    await expect(
      client(fetch).conversions.create({ external_id: 'inv_1', amount: 10, customer_id: 'c' }),
    ).resolves.toEqual({ conversion: {}, deduped: true });
    expect(calls).toHaveLength(2);
    expect(calls[1].init.body).toBe(calls[0].init.body);
  });

  it('a write without a business key (programs.create) is retried only when it certainly was not processed', async () => {
    const reset = scriptedFetch(networkError('ECONNRESET'), ok({ program: {} }));
    await expect(client(reset.fetch).programs.create({ name: 'P', commission_value: 1 })).rejects.toBeInstanceOf(
      ConnectionError,
    );
    expect(reset.calls).toHaveLength(1);

    const gateway = scriptedFetch(fail(502, 'Bad gateway'), ok({ program: {} }));
    await expect(client(gateway.fetch).programs.create({ name: 'P', commission_value: 1 })).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(gateway.calls).toHaveLength(1);

    const refused = scriptedFetch(
      networkError('ECONNREFUSED'),
      fail(503, 'busy', { 'retry-after': '0' }),
      json(201, { success: true, data: { program: { id: 'p' } } }),
    );
    await expect(client(refused.fetch).programs.create({ name: 'P', commission_value: 1 })).resolves.toEqual({
      program: { id: 'p' },
    });
    expect(refused.calls).toHaveLength(3);
  });

  it('backoff is exponential, capped at 8 s, with up to 25 % jitter', () => {
    expect(retryDelayMs(0, () => 0)).toBe(500);
    expect(retryDelayMs(1, () => 0)).toBe(1000);
    expect(retryDelayMs(2, () => 0)).toBe(2000);
    expect(retryDelayMs(10, () => 0)).toBe(8000);
    expect(retryDelayMs(1, () => 1)).toBe(750);
    for (let i = 0; i < 100; i++) {
      const d = retryDelayMs(3);
      expect(d).toBeGreaterThan(3000);
      expect(d).toBeLessThanOrEqual(4000);
    }
  });
});

describe('timeouts and aborts', () => {
  it('an attempt longer than timeoutMs is a TimeoutError, retried for idempotent requests', async () => {
    const { fetch, calls } = scriptedFetch('hang');
    const started = Date.now();
    const err = await rejection(client(fetch, { timeoutMs: 100, maxRetries: 1 }).customers.get('cus_1'));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as TimeoutError).message).toBe('Request timed out after 100 ms');
    expect(calls).toHaveLength(2);
    expect(calls[0].init.signal.aborted).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });

  it('a timed-out programs.create is not retried (it may have been processed)', async () => {
    const { fetch, calls } = scriptedFetch('hang');
    await expect(
      client(fetch, { timeoutMs: 50 }).programs.create({ name: 'P', commission_value: 1 }),
    ).rejects.toBeInstanceOf(TimeoutError);
    expect(calls).toHaveLength(1);
  });

  it('per-request timeoutMs overrides the client', async () => {
    const { fetch } = scriptedFetch('hang');
    const started = Date.now();
    await expect(client(fetch, { timeoutMs: 60_000, maxRetries: 0 }).me({ timeoutMs: 50 })).rejects.toBeInstanceOf(
      TimeoutError,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("the caller's signal aborts the request and pending retries: UserAbortError, not retried", async () => {
    const { fetch, calls } = scriptedFetch('hang');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await rejection(client(fetch, { maxRetries: 3 }).me({ signal: controller.signal }));
    expect(err).toBeInstanceOf(UserAbortError);
    expect(calls).toHaveLength(1);

    const waiting = scriptedFetch(fail(503, 'busy', { 'retry-after': '30' }));
    const c2 = new AbortController();
    setTimeout(() => c2.abort(), 50);
    const started = Date.now();
    await expect(client(waiting.fetch).me({ signal: c2.signal })).rejects.toBeInstanceOf(UserAbortError);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(waiting.calls).toHaveLength(1);
  });

  describe('against real sockets', () => {
    let stalling: Server;
    let stallingUrl: string;
    let closedUrl: string;
    beforeAll(async () => {
      // Sends the status line and half a body, then never finishes: the timeout must cover the body.
      stalling = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"success":true,');
      });
      await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
      stallingUrl = `http://127.0.0.1:${(stalling.address() as AddressInfo).port}`;
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
    });
    afterAll(async () => {
      stalling.closeAllConnections();
      await new Promise<void>((resolve) => stalling.close(() => resolve()));
    });

    it('a response whose body never ends times out', async () => {
      const sdk = new Client({ apiKey: 'svc-test', baseUrl: stallingUrl, timeoutMs: 300, maxRetries: 0 });
      await expect(sdk.me()).rejects.toBeInstanceOf(TimeoutError);
    });

    it('a refused connection is a ConnectionError', async () => {
      const sdk = new Client({ apiKey: 'svc-test', baseUrl: closedUrl, maxRetries: 0 });
      const err = await rejection(sdk.me());
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as ConnectionError).message).toMatch(/ECONNREFUSED/);
    });
  });
});
