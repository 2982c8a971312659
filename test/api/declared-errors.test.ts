import { createHash, randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract } from '@affiliate-attribution/contract';
import { createApp } from '../../server/src/app.js';
import { memoryRateLimiter } from '../../server/src/http/rate-limit-flexible.js';
import { TAX_FORM_BODY_LIMIT_BYTES } from '../../server/src/modules/tax-forms/document-type.js';
import { createOrganization } from '../support/api.js';
import { assertDocumentedResponse } from '../support/openapi-validation.js';
import { TEST_ADMIN_TOKEN, TEST_PUBLIC_BASE_URL, testServer } from '../support/server.js';

/**
 * Every error the request pipeline (server/src/http/stages.ts) answers on a route is declared in
 * that route's contract responses (contract/src/common/errors.ts), and so in the OpenAPI document
 * generated from it: each route is probed with what the stages refuse (no credentials, NUL
 * characters, a body over the limit, a body that is not JSON, a spent rate limit).
 */
function routesOf(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((value) => (isAppRoute(value) ? [value] : routesOf(value)));
}

const ROUTES = routesOf(contract);
const ID = '3f2b8c1e-7d4a-4e9b-8a61-2c5d9f0e4b7a';
const pathOf = (route: AppRoute) => route.path.replace(':provider', 'stripe').replace(/:\w+/g, ID);
const takesJsonBody = (route: AppRoute) => ['POST', 'PUT', 'PATCH'].includes(route.method);
const isUnder = (route: AppRoute, prefix: string) => route.path.startsWith(`${prefix}/`);

interface Answer {
  status: number;
  text: string;
}

/**
 * node:http rather than fetch: a GET may carry a body here. Chunked (stated, since node:http frames
 * no GET body by itself), so that the server reads a refused body whole before answering.
 */
function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const framing = body ? { 'transfer-encoding': 'chunked' } : {};
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: url.pathname + url.search,
        headers: { ...headers, ...framing },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            assertDocumentedResponse(
              method,
              url.pathname + url.search,
              res.statusCode!,
              text,
              res.headers['content-type'] ?? null,
            );
            resolve({ status: res.statusCode!, text });
          } catch (err) {
            // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the assertion's own error, passed on unchanged
            reject(err);
          }
        });
      },
    );
    req.on('error', reject);
    if (body) {
      req.write(body.subarray(0, 1));
      req.end(body.subarray(1));
    } else {
      req.end();
    }
  });
}

function expectDeclared(route: AppRoute, answer: Answer, status: number, probe: string): void {
  const where = `${route.method} ${route.path} (${probe}): ${answer.text.slice(0, 200)}`;
  expect(answer.status, where).toBe(status);
  expect(Object.keys(route.responses), `${where}: ${status} is not among the contract's responses`).toContain(
    String(status),
  );
}

describe('every error the pipeline answers is declared in the contract', () => {
  let base: string;
  let key: string;
  const servers: Server[] = [];

  let partnerCookie: string;
  const partnerRoutes = new Set(routesOf(contract.partner));
  const credentials = (route: AppRoute): Record<string, string> =>
    isUnder(route, '/api')
      ? { authorization: `Bearer ${key}` }
      : isUnder(route, '/admin')
        ? { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }
        : partnerRoutes.has(route)
          ? { cookie: partnerCookie }
          : {};

  beforeAll(async () => {
    ({ baseUrl: base } = await testServer());
    const organization = await createOrganization();
    key = organization.key;
    // A partner's session, as signing in by an e-mailed link makes it (test/web/portal-api.test.ts does that).
    const program = await organization.api.post('/api/programs', { name: 'Partners', commission_value: 10 });
    const email = `declared-${Date.now()}@partners.example`;
    await organization.api.post('/api/affiliates', { email, program_id: program.body.data.program.id });
    const token = randomBytes(32).toString('base64url');
    const { db } = await testServer();
    await db.orm.em
      .getConnection()
      .execute(
        `insert into partner_sessions (id, organization_id, email, token_hash, expires_at) values (gen_random_uuid(), ?, ?, ?, now() + interval '1 hour')`,
        [organization.id, email, createHash('sha256').update(token).digest('hex')],
      );
    partnerCookie = `svc.partner_session=${organization.id}.${token}`;
  });

  afterAll(() => {
    for (const server of servers) server.close();
  });

  it('covers routes under /api, /admin, /public and /webhooks', () => {
    for (const prefix of ['/api', '/admin', '/public', '/webhooks'])
      expect(
        ROUTES.some((route) => isUnder(route, prefix)),
        prefix,
      ).toBe(true);
  });

  it('401 without credentials (/api, /admin)', async () => {
    for (const route of ROUTES.filter((r) => isUnder(r, '/api') || isUnder(r, '/admin'))) {
      expectDeclared(route, await send(base, route.method, pathOf(route), {}), 401, 'no credentials');
    }
  });

  it('400 for NUL characters in the query string', async () => {
    for (const route of ROUTES.filter((r) => !isUnder(r, '/webhooks'))) {
      const headers = {
        ...credentials(route),
        ...(takesJsonBody(route) ? { 'content-type': 'application/json' } : {}),
      };
      expectDeclared(
        route,
        await send(
          base,
          route.method,
          `${pathOf(route)}?probe=%00`,
          headers,
          takesJsonBody(route) ? Buffer.from('{}') : undefined,
        ),
        400,
        'NUL',
      );
    }
  });

  it('413 for a body over the limit, whatever the method (/api, /admin, /public)', async () => {
    const large = Buffer.from(JSON.stringify({ filler: 'x'.repeat(1024 * 1024) }));
    // A tax form upload takes a document of up to 10 MiB in base64: over its own limit.
    const larger = Buffer.from(JSON.stringify({ filler: 'x'.repeat(TAX_FORM_BODY_LIMIT_BYTES) }));
    for (const route of ROUTES.filter((r) => !isUnder(r, '/webhooks'))) {
      const headers = { ...credentials(route), 'content-type': 'application/json' };
      const body = route === contract.partner.submitTaxForm ? larger : large;
      expectDeclared(route, await send(base, route.method, pathOf(route), headers, body), 413, 'large body');
    }
  });

  it('415 for a body that is not JSON (POST, PUT, PATCH on /api, /admin, /public)', async () => {
    for (const route of ROUTES.filter((r) => takesJsonBody(r) && !isUnder(r, '/webhooks'))) {
      const headers = { ...credentials(route), 'content-type': 'application/x-www-form-urlencoded' };
      expectDeclared(
        route,
        await send(base, route.method, pathOf(route), headers, Buffer.from('a=1')),
        415,
        'form body',
      );
    }
  });

  it('429 once an API key has spent its budget (/api)', async () => {
    const { db } = await testServer();
    const { listener } = createApp({
      orm: db.orm,
      config: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL, API_KEY_CACHE_TTL_MS: 5_000 },
      apiKeyRateLimiter: memoryRateLimiter({ limit: 1, windowSeconds: 60 }),
    });
    const server = createServer(listener).listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    const limited = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect((await send(limited, 'GET', '/api/me', { authorization: `Bearer ${key}` })).status).toBe(200);
    for (const route of ROUTES.filter((r) => isUnder(r, '/api'))) {
      expectDeclared(
        route,
        await send(limited, route.method, pathOf(route), { authorization: `Bearer ${key}` }),
        429,
        'rate limit',
      );
    }
  });
});
