import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type RequestListener,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { Readiness } from '../../server/src/http/health.js';
import { stagesOf } from '../../server/src/http/pipeline.js';
import { createOrganization } from '../support/api.js';
import { TEST_ADMIN_TOKEN, TEST_PUBLIC_BASE_URL, testServer } from '../support/server.js';

/**
 * The one request pipeline (server/src/http/stages.ts) in both lanes: Express (`app`) and the
 * service's listener (the hot lane first). test/api/hot-lane.test.ts compares their answers; these
 * cases cover what an answer does not show: the stages each hot route runs, what they log, and
 * the draining stage.
 */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
}

function get(base: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the request pipeline', () => {
  const servers: Server[] = [];
  let key: string;

  async function listen(listener: RequestListener): Promise<string> {
    const server = createServer(listener).listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    ({ key } = await createOrganization());
  });

  afterAll(() => {
    for (const server of servers) server.close();
  });

  it('runs, for each hot route, the stages under /api in the list order, and nothing of the body for a GET', async () => {
    const { db } = await testServer();
    const { hotLane } = createApp({
      orm: db.orm,
      config: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL, API_KEY_CACHE_TTL_MS: 5_000 },
    });
    const upToTheBody = [
      'request id',
      'metrics',
      'security headers',
      'draining',
      'access log',
      'API key',
      'rate limit (api-key)',
    ];
    expect(hotLane.stageNames('GET /api/me')).toEqual(upToTheBody);
    for (const path of ['/api/clicks', '/api/customers', '/api/conversions']) {
      expect(hotLane.stageNames(`POST ${path}`)).toEqual([...upToTheBody, 'JSON body', 'unstorable text']);
    }
  });

  it('refuses a hot route under an Express-only slot or stage of the list', () => {
    const steps = [{ slot: 'static surface', paths: ['/docs'] }] as const;
    expect(() => stagesOf(steps, { method: 'GET', path: '/docs/init.js' })).toThrow(
      /cannot lie under the Express-only static surface/,
    );
    expect(stagesOf(steps, { method: 'GET', path: '/documents' }).names).toEqual([]);
    const cors = [{ name: 'CORS (public)', paths: ['/public'], express: () => undefined }];
    expect(() => stagesOf(cors, { method: 'POST', path: '/public/clicks' })).toThrow(
      /cannot lie under the Express-only stage CORS \(public\)/,
    );
    expect(stagesOf(cors, { method: 'POST', path: '/publication' }).names).toEqual([]);
  });

  it('lets a request through when the rate limiter fails, and logs it under the request id, in both lanes', async () => {
    const { db } = await testServer();
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const { app, listener } = createApp({
      orm: db.orm,
      config: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL, API_KEY_CACHE_TTL_MS: 5_000 },
      logger,
      apiKeyRateLimiter: { hit: () => Promise.reject(new Error('store down')) },
    });
    for (const [base, id] of [
      [await listen(app), 'via-express'],
      [await listen(listener), 'via-hot-lane'],
    ] as const) {
      const answer = await get(base, '/api/me', { authorization: `Bearer ${key}`, 'x-request-id': id });
      expect(answer.status).toBe(200);
      expect(answer.headers['ratelimit-limit']).toBeUndefined();
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 40,
          reqId: id,
          msg: 'rate limiter unavailable; request allowed',
          err: expect.objectContaining({ message: 'store down' }),
        }),
      );
      expect(lines).toContainEqual(
        expect.objectContaining({
          msg: 'request completed',
          req: expect.objectContaining({ id, method: 'GET', url: '/api/me' }),
          res: { statusCode: 200 },
        }),
      );
    }
  });

  it('asks keep-alive clients to reconnect elsewhere while draining, in both lanes', async () => {
    const { db } = await testServer();
    const readiness = new Readiness();
    const { app, listener } = createApp({
      orm: db.orm,
      config: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL, API_KEY_CACHE_TTL_MS: 5_000 },
      readiness,
    });
    const bases = [await listen(app), await listen(listener)];
    for (const base of bases)
      expect((await get(base, '/api/me', { authorization: `Bearer ${key}` })).headers.connection).toBe('keep-alive');
    readiness.draining = true;
    for (const base of bases) {
      const answer = await get(base, '/api/me', { authorization: `Bearer ${key}` });
      expect([answer.status, answer.headers.connection]).toEqual([200, 'close']);
    }
  });
});
