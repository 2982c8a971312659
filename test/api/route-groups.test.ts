import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../server/src/app.js';
import { expressStagesOf } from '../../server/src/http/pipeline.js';
import { createMerchant } from '../support/api.js';
import { TEST_ADMIN_TOKEN, TEST_PUBLIC_BASE_URL, testServer } from '../support/server.js';

/**
 * One request pipeline for every route group (issue 37: /public, /partner, /auth and /webhooks
 * each built their own request chain beside the one of /api). Every group goes through the list of
 * server/src/http/stages.ts; a group's own stages declare their paths in it. Checked on the list as
 * mounted, and on the wire: the request id header, the access log line and the metrics' label come
 * from the same stages for a representative route of each group.
 */
const COMMON = ['request id', 'metrics', 'security headers', 'draining', 'access log'];

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
}

function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('one request pipeline for every route group', () => {
  let created: App;
  let merchant: Awaited<ReturnType<typeof createMerchant>>;
  const lines: Record<string, unknown>[] = [];
  let server: Server;
  let base: string;

  beforeAll(async () => {
    merchant = await createMerchant();
    const { db } = await testServer();
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    created = createApp({
      orm: db.orm,
      config: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL, API_KEY_CACHE_TTL_MS: 5_000 },
      logger,
    });
    server = createServer(created.listener).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server?.close();
  });

  it('every group runs the common stages of the one list first, then its own, declared with their paths', () => {
    const of = (method: string, path: string) => expressStagesOf(created.pipeline, method, path);
    const groups = {
      api: of('POST', '/api/conversions'),
      admin: of('POST', '/admin/organizations'),
      public: of('POST', '/public/organizations/org-1/clicks'),
      webhooks: of('POST', '/webhooks/stripe/org-1'),
      auth: of('POST', '/auth/sign-in/email'),
      invitations: of('POST', '/auth/invitations/accept'),
      partner: of('POST', '/partner/api/sign-in'),
    };
    for (const [group, { stages, slot }] of Object.entries(groups)) {
      expect(slot, group).toBeUndefined();
      expect(stages.slice(0, COMMON.length), group).toEqual(COMMON);
      expect(stages, group).toContain('unstorable text');
    }
    expect(groups.api.stages).toEqual([
      ...COMMON,
      'session',
      'API key',
      'rate limit (api-key)',
      'JSON body',
      'unstorable text',
    ]);
    expect(groups.public.stages).toEqual([
      ...COMMON,
      'CORS (public)',
      'forwarded visitor',
      'rate limit (public-clicks)',
      'JSON body (public)',
      'unstorable text',
    ]);
    // Signatures are over the raw bytes: no stage of the list parses a webhook's body.
    expect(groups.webhooks.stages).toEqual([...COMMON, 'webhook outcome', 'unstorable text']);
    expect(groups.auth.stages).toEqual([...COMMON, 'auth same origin', 'rate limit (sign-in)', 'unstorable text']);
    expect(of('GET', '/auth/get-session').stages).toEqual([...COMMON, 'auth same origin', 'unstorable text']);
    expect(groups.invitations.stages).toEqual([
      ...COMMON,
      'auth same origin',
      'rate limit (sign-in)',
      'JSON body',
      'unstorable text',
    ]);
    expect(groups.partner.stages).toEqual([
      ...COMMON,
      'partner session',
      'rate limit (partner-sign-in)',
      'JSON body',
      'unstorable text',
      'partner same origin',
    ]);
    expect(of('GET', '/partner/api/sign-in').stages).not.toContain('rate limit (partner-sign-in)');
    expect(of('GET', '/docs').slot).toBe('static surface');
  });

  it('each group answers with the request id, one access log line and a metrics series, from the same stages', async () => {
    const requests: [group: string, method: string, path: string, headers: Record<string, string>, body?: string][] = [
      ['api', 'GET', '/api/me', { authorization: `Bearer ${merchant.key}` }],
      [
        'public',
        'POST',
        `/public/organizations/${merchant.id}/clicks`,
        { 'content-type': 'text/plain' },
        JSON.stringify({ ref: merchant.slug }),
      ],
      ['webhooks', 'POST', `/webhooks/stripe/${merchant.id}`, { 'content-type': 'application/json' }, '{}'],
      ['auth', 'GET', '/auth/get-session', {}],
      ['partner', 'GET', '/partner/api/session', {}],
    ];
    for (const [group, method, path, headers, body] of requests) {
      const id = `route-group-${group}`;
      const answer = await send(base, method, path, { ...headers, 'x-request-id': id }, body);
      expect(answer.headers['x-request-id'], group).toBe(id);
      expect(answer.headers['x-content-type-options'], group).toBe('nosniff');
      const logged = lines.filter(
        (line) => line.msg === 'request completed' && (line.req as { id?: string } | undefined)?.id === id,
      );
      expect(logged, group).toEqual([
        expect.objectContaining({
          req: expect.objectContaining({ method, url: path }),
          res: { statusCode: answer.status },
        }),
      ]);
      const text = await created.metrics.registry.metrics();
      expect(text, group).toMatch(
        new RegExp(`http_requests_total\\{method="${method}",route="[^"]+",status="${answer.status}"\\} \\d`),
      );
    }
  });
});
