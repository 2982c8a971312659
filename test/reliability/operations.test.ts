import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { type Server, createServer, type RequestListener } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { errorHandler } from '../../server/src/http/error-handler.js';
import { createLogger } from '../../server/src/http/logging.js';
import { createMerchant } from '../support/api.js';
import { TEST_ADMIN_TOKEN, TEST_PUBLIC_BASE_URL, testServer } from '../support/server.js';
import { call, isEnvelope } from './support/service.js';

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

async function listen(listener: RequestListener): Promise<{ url: string; server: Server }> {
  const server = createServer(listener).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/**
 * Health, readiness, metrics, logs and security headers of an app built exactly as main.ts builds
 * it, on the worker's database, with its log lines captured.
 */
describe('operations and security surface', () => {
  let url: string;
  let server: Server;
  const lines: Record<string, any>[] = [];
  const rawLines: string[] = [];
  let merchant: Awaited<ReturnType<typeof createMerchant>>;
  let logger: ReturnType<typeof createLogger>;

  beforeAll(async () => {
    const { db } = await testServer();
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
          rawLines.push(line);
          lines.push(JSON.parse(line));
        }
        done();
      },
    });
    logger = createLogger('info', sink);
    const { listener } = createApp({
      orm: db.orm,
      logger,
      config: {
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL,
        API_KEY_CACHE_TTL_MS: 5_000,
        METRICS_TOKEN,
      } as never,
    });
    ({ url, server } = await listen(listener));
    merchant = await createMerchant();
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('GET /health and GET /ready answer without a key', async () => {
    const health = await call(url, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ success: true, data: { status: 'ok' } });
    const ready = await call(url, 'GET', '/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ success: true, data: { status: 'ready', database: 'ok' } });
    expect(ready.headers.get('cache-control')).toBe('no-store');
  });

  it('counts requests by route pattern and status, and the domain events', async () => {
    const key = merchant.key;
    const unknownId = '6f1c6a53-0000-4000-8000-000000000001';
    await call(url, 'GET', `/api/customers/${unknownId}`, { key });
    const click = await call(url, 'POST', '/api/clicks', { key, body: { ref: merchant.slug } });
    expect(click.status).toBe(201);
    // The same visit captured again (the snippet after the server middleware): answered with that click, not counted.
    const sameVisit = await call(url, 'POST', '/api/clicks', {
      key,
      body: {
        ref: merchant.slug,
        cookie_id: (click.body as { data: { click: { cookie_id: string } } }).data.click.cookie_id,
      },
    });
    expect(sameVisit.status).toBe(201);
    expect((sameVisit.body as { data: { click: { kept_earlier_click: boolean } } }).data.click.kept_earlier_click).toBe(
      true,
    );
    const body = { external_id: `metrics-${Date.now()}`, amount: 12, ref: merchant.slug };
    expect((await call(url, 'POST', '/api/conversions', { key, body })).status).toBe(201);
    expect((await call(url, 'POST', '/api/conversions', { key, body })).status).toBe(200);
    const webhook = await call(url, 'POST', `/webhooks/stripe/${merchant.id}`, {
      body: { id: 'evt_1', type: 'invoice.paid' },
    });
    expect(webhook.status).toBe(400);

    expect((await call(url, 'GET', '/metrics')).status).toBe(401);
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/customers\/:id",status="404"\} 1/);
    expect(text).toMatch(/http_requests_total\{method="POST",route="\/api\/conversions",status="201"\} 1/);
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="0.005",method="POST",route="\/api\/conversions",status="200"\}/,
    );
    expect(text).toMatch(/clicks_recorded_total\{source="api"\} 1/);
    expect(text).toMatch(/conversions_total\{outcome="created"\} 1/);
    expect(text).toMatch(/conversions_total\{outcome="deduped"\} 1/);
    expect(text).toMatch(/webhook_events_total\{provider="stripe",outcome="rejected"\} 1/);
    expect(text).toMatch(/process_cpu_seconds_total/);
    // Labels are patterns: no raw id ever becomes a label value.
    expect(text).not.toContain(unknownId);
    expect(text).not.toContain(merchant.id);
  });

  it('logs JSON lines with the request id, and never the key or a token', async () => {
    const requestId = `log-check-${Date.now()}`;
    const res = await fetch(`${url}/api/me`, {
      headers: { authorization: `Bearer ${merchant.key}`, 'x-request-id': requestId, cookie: 'session=secret-cookie' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe(requestId);
    await fetch(`${url}/admin/organizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '{"name":"Logged"}',
    });
    await new Promise((resolve) => setTimeout(resolve, 50));

    const line = lines.find((l) => l.req?.id === requestId);
    expect(line, 'a log line for the request').toBeDefined();
    expect(line!.res.statusCode).toBe(200);
    // The access line carries no headers at all: nothing in them can leak.
    expect(line!.req).toEqual({ id: requestId, method: 'GET', url: '/api/me', remoteAddress: expect.any(String) });
    expect(typeof line!.responseTime).toBe('number');
    const all = rawLines.join('\n');
    expect(all).not.toContain(merchant.key);
    expect(all).not.toContain(merchant.key.slice(4));
    expect(all).not.toContain(TEST_ADMIN_TOKEN);
    expect(all).not.toContain(METRICS_TOKEN);
    expect(all).not.toContain('secret-cookie');
    // Every request line carries its request id.
    for (const l of lines.filter((l) => l.req)) expect(l.req.id).toEqual(expect.any(String));
  });

  it('redacts secrets on every line but the access line (whose fields hold none), all on the one stream', async () => {
    logger
      .child({ reqId: 'probe-1' })
      .warn(
        { api_key: 'svc-probe-secret', headers: { authorization: 'Bearer probe-token' }, password: 'probe-pw' },
        'redaction probe',
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const probe = lines.find((l) => l.msg === 'redaction probe');
    expect(probe).toMatchObject({
      reqId: 'probe-1',
      api_key: '[redacted]',
      headers: { authorization: '[redacted]' },
      password: '[redacted]',
    });
    for (const secret of ['svc-probe-secret', 'probe-token', 'probe-pw'])
      expect(rawLines.join('\n')).not.toContain(secret);
    expect(lines.some((l) => l.msg === 'request completed')).toBe(true);
  });

  it('sends security headers; CORS only on the public tracking endpoints', async () => {
    for (const path of ['/api/me', '/health', '/does-not-exist']) {
      const res = await fetch(url + path, {
        headers: { authorization: `Bearer ${merchant.key}`, origin: 'https://evil.example' },
      });
      expect(res.headers.get('content-security-policy'), path).toBe("default-src 'none';frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('strict-transport-security'), path).toMatch(/max-age=31536000/);
      expect(res.headers.get('x-frame-options'), path).toBe('SAMEORIGIN');
      expect(res.headers.get('cross-origin-resource-policy'), path).toBe('same-origin');
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(res.headers.get('x-powered-by'), path).toBeNull();
      expect(res.headers.get('access-control-allow-origin'), path).toBeNull();
    }
    const preflight = await fetch(`${url}/api/conversions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.headers.get('access-control-allow-headers')).toBeNull();

    const publicPreflight = await fetch(`${url}/public/organizations/${merchant.id}/clicks`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
    });
    expect(publicPreflight.headers.get('access-control-allow-origin')).toBe('*');
    const snippet = await fetch(`${url}/snippet.js`, { headers: { 'user-agent': BROWSER_UA } });
    expect(snippet.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
  });

  it('stores API keys only as hashes', async () => {
    const { db } = await testServer();
    const rows = await db.orm.em
      .fork()
      .getConnection()
      .execute('select * from api_keys where organization_id = ?', [merchant.id]);
    expect(rows.length).toBeGreaterThan(0);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(merchant.key);
    expect(stored).not.toContain(merchant.key.slice(4, 20));
  });
});

describe('error responses', () => {
  it('never carry a stack trace, SQL or a driver message', async () => {
    const lines: string[] = [];
    const logger = createLogger(
      'info',
      new Writable({ write: (c: Buffer, _e, done) => (lines.push(c.toString()), done()) }),
    );
    const app = express();
    app.get('/boom', () => {
      const err = new Error(
        'insert into conversions (external_id) values ($1) - duplicate key value violates unique constraint',
      ) as Error & { code: string };
      err.code = '23505';
      throw err;
    });
    app.get('/bad-escape/:id', (_req, res) => res.json({ ok: true }));
    app.use(errorHandler(logger));
    const { url, server } = await listen(app);
    try {
      const res = await call(url, 'GET', '/boom');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ success: false, message: 'Internal server error' });
      // The details stay in the log, for the operator.
      expect(lines.join('')).toContain('violates unique constraint');

      const malformed = await call(url, 'GET', '/bad-escape/%E0%A4%A');
      expect(malformed.status).toBe(400);
      expect(isEnvelope(malformed.body)).toBe(true);
    } finally {
      server.close();
    }
  });
});
