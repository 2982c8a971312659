import { request as httpRequest, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createApp } from '../../server/src/app.js';
import { configureHttpServer } from '../../server/src/http/http-server.js';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { ZodTypeAny } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createMerchant, createOrganization } from '../support/api.js';
import { TEST_ADMIN_TOKEN, TEST_PUBLIC_BASE_URL, testServer } from '../support/server.js';
import { contractRoutes, pathParamNames, type ContractRoute } from './support/contract-routes.js';
import { arbitraryFor, hostileValue, type FuzzContext } from './support/zod-arbitrary.js';
import { isEnvelope } from './support/service.js';

/**
 * Property-based fuzzing of every route of the contract, generated from its own zod schemas:
 * malformed and hostile bodies, wrong types, huge and odd-unicode values, bad path and query
 * values, missing, wrong and duplicated headers. The properties: never a 5xx; an error is always
 * exactly the envelope; a refused write leaves no trace (row counts of the organization unchanged).
 * Bounded: FUZZ_RUNS cases per route (default 80).
 */
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 80);

interface RawResponse {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

function send(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body?: string,
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Percent-encodes every byte of the UTF-8 form, so that even lone surrogates make a valid request line. */
function encodeSegment(value: string): string {
  return [...Buffer.from(value, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).padStart(2, '0').toUpperCase()}`,
    )
    .join('');
}

interface Case {
  params: Record<string, string>;
  rawSegment?: string;
  query: [string, string][];
  body: { kind: 'json'; value: unknown } | { kind: 'raw'; text: string } | { kind: 'none' };
  auth: 'valid' | 'missing' | 'wrong' | 'duplicated' | 'other-org' | 'admin' | 'garbage';
  authGarbage: string;
  contentType: string | string[] | undefined;
  requestId: string | undefined;
}

describe('fuzzing every route from the contract schemas', () => {
  let baseUrl: string;
  let fuzz: Awaited<ReturnType<typeof createMerchant>>;
  let other: Awaited<ReturnType<typeof createOrganization>>;
  let ctx: FuzzContext;
  let tables: string[];
  const totals = { cases: 0, statuses: {} as Record<string, number>, serverErrors: 0 };

  /**
   * The organization's row counts, but for what a route writes by design when it refuses: a
   * provider webhook refused before verification is counted in webhook_rejections (the
   * Integrations page's log of refusals; nothing of the request kept).
   */
  async function rowCounts(routePath: string): Promise<string> {
    const { db } = await testServer();
    const counted = routePath.startsWith('/webhooks/') ? tables.filter((t) => t !== 'webhook_rejections') : tables;
    const sql = counted.map((t) => `(select count(*) from "${t}" where organization_id = ?) as "${t}"`).join(', ');
    const [row] = await db.orm.em
      .fork()
      .getConnection()
      .execute(
        `select ${sql}`,
        counted.map(() => fuzz.id),
      );
    return JSON.stringify(row);
  }

  let server: Server;

  beforeAll(async () => {
    // The worker's database, behind an HTTP server configured exactly as main.ts configures it.
    const { db } = await testServer();
    const { listener } = createApp({
      orm: db.orm,
      config: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL, API_KEY_CACHE_TTL_MS: 5_000 },
      logger: pino({ level: 'error' }, pino.destination(2)),
    });
    server = createServer(listener).listen(0, '127.0.0.1');
    configureHttpServer(server, pino({ level: 'silent' }));
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const rows: { table_name: string }[] = await db.orm.em
      .fork()
      .getConnection()
      .execute(
        `select table_name from information_schema.columns where column_name = 'organization_id' and table_schema = current_schema() order by table_name`,
      );
    tables = rows.map((r) => r.table_name);
    expect(tables).toEqual(expect.arrayContaining(['conversions', 'customers', 'clicks', 'affiliates', 'programs']));

    fuzz = await createMerchant();
    other = await createOrganization();
    const click = await fuzz.api.post('/api/clicks', { ref: fuzz.slug });
    const customer = await fuzz.api.post('/api/customers', { customer_id: 'fuzz-customer', ref: fuzz.slug });
    const conversion = await fuzz.api.post('/api/conversions', {
      external_id: 'fuzz-order',
      amount: 20,
      customer_id: 'fuzz-customer',
    });
    await fuzz.api.put('/api/integrations/stripe', { signing_secret: 'whsec_fuzzing_secret_0123456789' });
    const spareKey = await admin().post(`/admin/organizations/${fuzz.id}/api-keys`);
    expect([click.status, customer.status, conversion.status, spareKey.status]).toEqual([201, 201, 201, 201]);
    ctx = {
      knownStrings: [
        fuzz.slug,
        fuzz.id,
        fuzz.program.id,
        fuzz.affiliate.id,
        click.body.data.click.id,
        click.body.data.click.cookie_id,
        customer.body.data.customer.id,
        'fuzz-customer',
        conversion.body.data.conversion.id,
        'fuzz-order',
        spareKey.body.data.api_key_info.id,
        'stripe',
        'chargebee',
        other.id,
      ],
    };
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  function caseArbitrary(route: ContractRoute['route']): fc.Arbitrary<Case> {
    const params = Object.fromEntries(
      pathParamNames(route.path).map((name) => [
        name,
        fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(...ctx.knownStrings) },
          { weight: 1, arbitrary: fc.uuid() },
          { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }) },
          { weight: 1, arbitrary: fc.constantFrom('x'.repeat(5000), '..', '.', ' ', '💸', 'null', 'undefined', '0') },
        ),
      ]),
    );
    const querySchema = route.method === 'GET' && route.query ? (route.query as ZodTypeAny) : undefined;
    const query = querySchema
      ? fc.tuple(arbitraryFor(querySchema, ctx), fc.boolean()).map(([value, duplicate]) => {
          const pairs: [string, string][] = [];
          if (value && typeof value === 'object' && !Array.isArray(value)) {
            for (const [k, v] of Object.entries(value))
              pairs.push([k, typeof v === 'string' ? v : (JSON.stringify(v) ?? '')]);
          }
          if (duplicate && pairs.length > 0) pairs.push(pairs[0]);
          return pairs;
        })
      : fc.constant<[string, string][]>([]);
    const bodySchema =
      'body' in route && route.body && typeof (route.body as { _def?: unknown })._def === 'object'
        ? (route.body as ZodTypeAny)
        : undefined;
    const body: fc.Arbitrary<Case['body']> = fc.oneof(
      {
        weight: bodySchema ? 8 : 1,
        arbitrary: (bodySchema ? arbitraryFor(bodySchema, ctx) : hostileValue()).map((value) => ({
          kind: 'json' as const,
          value,
        })),
      },
      { weight: 1, arbitrary: hostileValue().map((value) => ({ kind: 'json' as const, value })) },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(
            '{',
            '{"amount":',
            '[1,2',
            'null',
            '""',
            '{"a":1}{"b":2}',
            '\u0000',
            'not json at all',
            '{"external_id":"\ud800"}',
            '['.repeat(50_000),
            '{"x":"' + 'y'.repeat(1_100_000) + '"}',
          )
          .map((text) => ({ kind: 'raw' as const, text })),
      },
      { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
    );
    return fc.record({
      params: fc.record(params),
      // fc.option's freq is the odds of nil: a malformed %-escape in 1 request of 12.
      rawSegment: fc.oneof(
        { weight: 11, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('%E0%A4%A', '%', '%zz', '%C0%AF', '%00') },
      ),
      query,
      body,
      auth: fc.constantFrom<Case['auth']>(
        'valid',
        'valid',
        'valid',
        'valid',
        'valid',
        'valid',
        'valid',
        'valid',
        'missing',
        'wrong',
        'duplicated',
        'other-org',
        'admin',
        'garbage',
      ),
      authGarbage: fc.string({ unit: 'grapheme-ascii', maxLength: 100 }),
      contentType: fc.oneof(
        { weight: 14, arbitrary: fc.constant('application/json') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            undefined,
            'text/plain',
            'application/json; charset=latin1',
            'application/json; charset=utf-16',
            'multipart/form-data; boundary=x',
            'application/x-www-form-urlencoded',
            '*/*',
            'garbage',
          ),
        },
        { weight: 1, arbitrary: fc.constant(['application/json', 'text/html']) },
      ),
      requestId: fc.option(fc.oneof(fc.string({ unit: 'grapheme-ascii', maxLength: 200 }), fc.uuid()), {
        nil: undefined,
      }),
    }) as fc.Arbitrary<Case>;
  }

  function headersFor(c: Case, path: string): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = {};
    switch (c.auth) {
      case 'valid':
        // The operator routes' valid credential is the admin token.
        headers.authorization = `Bearer ${path.startsWith('/admin/') ? TEST_ADMIN_TOKEN : fuzz.key}`;
        break;
      case 'wrong':
        headers.authorization = `Bearer svc-${'A'.repeat(43)}`;
        break;
      case 'duplicated':
        headers.authorization = [`Bearer ${fuzz.key}`, `Bearer ${other.key}`];
        break;
      case 'other-org':
        headers.authorization = other.key;
        break;
      case 'admin':
        headers.authorization = `Bearer ${TEST_ADMIN_TOKEN}`;
        break;
      case 'garbage':
        headers.authorization = c.authGarbage;
        break;
      case 'missing':
        break;
    }
    if (c.contentType !== undefined) headers['content-type'] = c.contentType;
    if (c.requestId !== undefined) headers['x-request-id'] = c.requestId;
    return headers;
  }

  const routes = contractRoutes();

  /** Polls the deletion an accepted DELETE /admin/organizations/{id} started until its job has ended. */
  async function deletionSettled(deletePath: string): Promise<void> {
    const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    for (let i = 0; i < 600; i++) {
      const res = await send(baseUrl, 'GET', `${deletePath}/deletion`, headers);
      const status =
        res.status === 200
          ? (JSON.parse(res.text) as { data: { deletion: { status: string } } }).data.deletion.status
          : undefined;
      if (status === 'completed' || status === 'failed' || res.status === 404) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the deletion ${deletePath} did not end`);
  }

  it('walks the whole contract', () => {
    expect(routes.length).toBeGreaterThanOrEqual(20);
  });

  for (const { name, route } of routes) {
    it(
      `${route.method} ${route.path} (${name}): never a 5xx, always the envelope, no partial write`,
      { timeout: 180_000 },
      async () => {
        await fc.assert(
          fc.asyncProperty(caseArbitrary(route), async (c) => {
            let path = route.path.replace(/:([A-Za-z]+)/g, (_, p: string) => encodeSegment(c.params[p] ?? ''));
            if (c.rawSegment && path.includes('/', 1)) path = path.replace(/\/([^/]*)$/, `/$1${c.rawSegment}`);
            if (c.query.length > 0)
              path += '?' + c.query.map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`).join('&');
            const body =
              route.method === 'GET' || c.body.kind === 'none'
                ? undefined
                : c.body.kind === 'raw'
                  ? c.body.text
                  : (JSON.stringify(c.body.value) ?? 'null');

            const before = await rowCounts(route.path);
            const res = await send(baseUrl, route.method, path, headersFor(c, route.path), body);
            // An organization deletion accepted (202) goes on in a job: it is waited for, so that its
            // batches never land in a later case's before/after counts.
            if (route.path === '/admin/organizations/:id' && route.method === 'DELETE' && res.status === 202)
              await deletionSettled(path);
            const after = await rowCounts(route.path);

            totals.cases++;
            totals.statuses[res.status] = (totals.statuses[res.status] ?? 0) + 1;
            if (res.status >= 500) totals.serverErrors++;
            const what = `${route.method} ${path.slice(0, 200)} -> ${res.status} ${res.text.slice(0, 300)}`;
            expect(res.status, what).toBeLessThan(500);
            // 431 is answered by Node's HTTP parser (configureHttpServer) before any middleware runs.
            if (res.status !== 431) expect(res.headers['x-request-id'], what).toBeTruthy();
            if (route.path === '/snippet.js') return;
            // A file download (the payouts export) answers its success as text/csv; its errors are JSON.
            if (res.status < 400 && String(res.headers['content-type']).startsWith('text/csv')) return;
            const parsed = JSON.parse(res.text);
            if (res.status >= 400) {
              expect(isEnvelope(parsed), what).toBe(true);
              expect(res.text, what).not.toMatch(/\bat .+\.(ts|js):\d+|select |insert into|violates|syntax error/i);
              expect(after, `a refused request changed stored rows: ${what}`).toBe(before);
            } else {
              expect(parsed.success, what).toBe(true);
            }
          }),
          { numRuns: RUNS_PER_ROUTE, endOnFailure: true },
        );
      },
    );
  }

  it('sends a random request id through unharmed or replaces it', async () => {
    const res = await send(baseUrl, 'GET', '/api/me', { authorization: fuzz.key, 'x-request-id': 'abc-123' });
    expect(res.headers['x-request-id']).toBe('abc-123');
    const replaced = await send(baseUrl, 'GET', '/api/me', {
      authorization: fuzz.key,
      'x-request-id': 'bad id\twith spaces',
    });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(randomUUID()).not.toBe(replaced.headers['x-request-id']);
  });

  it('reports its figures', () => {
    console.info(
      `[fuzz] ${routes.length} routes, ${totals.cases} cases, statuses ${JSON.stringify(totals.statuses)}, 5xx seen: ${totals.serverErrors}`,
    );
    expect(totals.serverErrors).toBe(0);
    expect(totals.cases).toBeGreaterThanOrEqual(routes.length * RUNS_PER_ROUTE);
  });
});
