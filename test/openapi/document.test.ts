import { readFileSync } from 'node:fs';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { Decimal } from 'decimal.js';
import type {
  MediaTypeObject,
  OpenAPIObject,
  OperationObject,
  RequestBodyObject,
  ResponseObject,
} from 'openapi3-ts/oas30';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { contract } from '@affiliate-attribution/contract';
import { buildOpenApiDocument, serializeDocument } from '../../openapi/document.js';
import { DOCUMENT_PATH, TYPES_PATH, generateTypes } from '../../openapi/generate.js';
import {
  commissionAfterRefund,
  computeCommission,
  type CommissionRule,
} from '../../server/src/attribution/commission.js';
import { loadConfig } from '../../server/src/config.js';
import { createMerchant, request } from '../support/api.js';
import { testServer } from '../support/server.js';

const committedText = readFileSync(DOCUMENT_PATH, 'utf8');
const committed = JSON.parse(committedText) as OpenAPIObject;

function routesOf(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((v) => (isAppRoute(v) ? [v] : routesOf(v)));
}

function operations(doc: OpenAPIObject): [string, string, OperationObject][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, OperationObject>).map(
      ([method, op]) => [path, method, op] as [string, string, OperationObject],
    ),
  );
}

describe('openapi/openapi.json', () => {
  it('is what the contract generates now (npm run openapi:check)', () => {
    const fresh = serializeDocument(buildOpenApiDocument());
    expect(fresh === committedText, 'openapi/openapi.json is stale: run `npm run openapi` and commit it').toBe(true);
  });

  it('the committed openapi-typescript types are what the document generates now', async () => {
    expect((await generateTypes(committed)) === readFileSync(TYPES_PATH, 'utf8'), 'run `npm run openapi`').toBe(true);
  });

  it('is deterministic', () => {
    expect(serializeDocument(buildOpenApiDocument())).toBe(serializeDocument(buildOpenApiDocument()));
  });

  it('has every route of the contract, with a summary and a description written in the contract', () => {
    const routes = routesOf(contract);
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const op = (
        committed.paths[route.path.replace(/:(\w+)/g, '{$1}')] as Record<string, OperationObject> | undefined
      )?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path} missing`).toBeDefined();
      expect(route.summary, `${route.method} ${route.path} has no summary in the contract`).toBeTruthy();
      expect(route.description, `${route.method} ${route.path} has no description in the contract`).toBeTruthy();
      expect(op!.summary).toBe(route.summary);
      expect(op!.description).toBe(route.description);
    }
    expect(operations(committed)).toHaveLength(routes.length);
  });

  it('gives every operation an id, a declared tag, security, and an example for every body', () => {
    const tags = new Set((committed.tags ?? []).map((t) => t.name));
    const ids = new Set<string>();
    for (const [path, method, op] of operations(committed)) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(op.operationId, where).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(ids.has(op.operationId!), `${where}: duplicate operationId`).toBe(false);
      ids.add(op.operationId!);
      expect(op.tags?.length, where).toBe(1);
      expect(tags.has(op.tags![0]), `${where}: tag not declared`).toBe(true);
      expect(Array.isArray(op.security), `${where}: security`).toBe(true);
      for (const p of op.parameters ?? [])
        expect((p as { description?: string }).description, `${where} ${JSON.stringify(p)}`).toBeTruthy();
      const media = Object.values((op.requestBody as RequestBodyObject | undefined)?.content ?? {});
      for (const m of media) expect(exampleValues(m).length, `${where}: request example`).toBeGreaterThan(0);
      for (const [status, response] of Object.entries(op.responses)) {
        // A file download (the payouts export) is the one success that is not JSON: text, with an example.
        const csv = Number(status) < 400 ? response.content?.['text/csv'] : undefined;
        if (csv) {
          expect(csv.schema, `${where} ${status}`).toEqual({ type: 'string' });
          expect(exampleValues(csv).length, `${where} ${status}: no example`).toBeGreaterThan(0);
          continue;
        }
        // A document download (a partner's tax form) is binary, of the document's own type.
        const file = Number(status) < 400 ? response.content?.['application/octet-stream'] : undefined;
        if (file) {
          expect(file.schema, `${where} ${status}`).toEqual({ type: 'string', format: 'binary' });
          continue;
        }
        const json = response.content?.['application/json'];
        expect(json, `${where} ${status}: no JSON schema`).toBeDefined();
        expect(exampleValues(json).length, `${where} ${status}: no example`).toBeGreaterThan(0);
        if (Number(status) >= 400) {
          // The one shared error envelope.
          expect(json!.schema, `${where} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorBody' });
          expect(json!.example).toMatchObject({ success: false, message: expect.any(String) });
        }
      }
      // Every operation can fail with 500 and 503 (database unavailable).
      expect(Object.keys(op.responses), where).toEqual(expect.arrayContaining(['500', '503']));
    }
  });

  it('describes both API key forms and the operator token', () => {
    const schemes = committed.components?.securitySchemes as unknown as Record<string, Record<string, string>>;
    expect(schemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
    expect(schemes.ApiKeyBearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.AdminToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    const me = (committed.paths['/api/me'] as Record<string, OperationObject>).get;
    expect(me.security).toEqual([{ ApiKey: [] }, { ApiKeyBearer: [] }]);
    const admin = (committed.paths['/admin/organizations'] as Record<string, OperationObject>).post;
    expect(admin.security).toEqual([{ AdminToken: [] }]);
  });

  it('has a default server a generated client can use as is: the local instance `npm start` serves', () => {
    // A relative `/` gives generated clients no base URL at all.
    expect(committed.servers).toHaveLength(1);
    const url = new URL(committed.servers![0].url);
    expect(url.href.replace(/\/$/, '')).toBe(committed.servers![0].url);
    const defaults = loadConfig({});
    expect(`${url.protocol}//${url.hostname}:${url.port}`).toBe(`http://127.0.0.1:${defaults.PORT}`);
    // 127.0.0.1 answers only while the default HOST listens on every IPv4 interface (or on it).
    expect(['0.0.0.0', '127.0.0.1']).toContain(defaults.HOST);
  });

  it('states the licence of the project (Apache-2.0, as every package.json and LICENSE say) and a contact', () => {
    const packages = [
      'package.json',
      'contract/package.json',
      'server/package.json',
      'client-sdk/package.json',
      'openapi/package.json',
    ];
    for (const file of packages) {
      const pkg = JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')) as { license?: string };
      expect(pkg.license, file).toBe('Apache-2.0');
    }
    const license = readFileSync(new URL('../../LICENSE', import.meta.url), 'utf8');
    expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004\s+http:\/\/www\.apache\.org\/licenses\//);
    expect(license).toContain('END OF TERMS AND CONDITIONS');
    expect(license).toMatch(/^ {3}Copyright \d{4} \S.*$/m);
    expect(license).not.toContain('[name of copyright owner]');
    expect(committed.info.license).toEqual({ name: 'Apache-2.0', url: 'https://spdx.org/licenses/Apache-2.0.html' });
    expect(committed.info.contact?.name).toBeTruthy();
    expect(committed.info.contact?.url ?? committed.info.contact?.email).toBeTruthy();
  });

  it('writes servers for given hosts (the legacy one second)', () => {
    const doc = buildOpenApiDocument({
      servers: [{ url: 'https://api.acme.example' }, { url: 'https://legacy.acme.example' }],
    });
    expect(doc.servers?.map((s) => s.url)).toEqual(['https://api.acme.example', 'https://legacy.acme.example']);
  });
});

/** The example values of a media type object: its `example`, or each of its named `examples`. */
function exampleValues(media: MediaTypeObject): unknown[] {
  if (media.examples) return Object.values(media.examples).map((e) => (e as { value: unknown }).value);
  return media.example === undefined ? [] : [media.example];
}

/** Every example value in the document, with where it is. */
function allExamples(doc: OpenAPIObject): [string, unknown][] {
  const out: [string, unknown][] = [];
  const walk = (node: unknown, where: string): void => {
    if (Array.isArray(node)) node.forEach((v, i) => walk(v, `${where}/${i}`));
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'example') out.push([`${where}/example`, value]);
        else if (key === 'examples' && value && typeof value === 'object' && !Array.isArray(value)) {
          for (const [name, e] of Object.entries(value))
            out.push([`${where}/examples/${name}`, (e as { value: unknown }).value]);
        } else walk(value, `${where}/${key}`);
      }
    }
  };
  walk(doc.paths, '#/paths');
  walk(doc.components, '#/components');
  return out;
}

interface ConversionExample {
  amount: number;
  currency: string;
  commission_amount: number;
  status: string;
  refunded_amount: number;
  reversed_at: string | null;
  occurred_at: string;
}

/** Every object in the examples that is a conversion record (it carries the fields a refund changes). */
function conversionExamples(doc: OpenAPIObject): [string, ConversionExample][] {
  const out: [string, ConversionExample][] = [];
  const walk = (node: unknown, where: string): void => {
    if (Array.isArray(node)) node.forEach((v, i) => walk(v, `${where}/${i}`));
    else if (node && typeof node === 'object') {
      const keys = ['amount', 'commission_amount', 'status', 'refunded_amount', 'reversed_at'];
      if (keys.every((k) => k in node)) out.push([where, node as ConversionExample]);
      for (const [key, value] of Object.entries(node)) walk(value, `${where}/${key}`);
    }
  };
  for (const [where, value] of allExamples(doc)) walk(value, where);
  return out;
}

/**
 * What is wrong with a conversion example, judged by the service's own rules: the program's
 * commission on the amount (computeCommission), reduced by the refunded part
 * (commissionAfterRefund); a full refund, and only a full one, reverses it (status, reversed_at).
 */
function conversionProblems(c: ConversionExample, rule: CommissionRule): string[] {
  const problems: string[] = [];
  const amount = new Decimal(c.amount);
  const refunded = new Decimal(c.refunded_amount);
  if (refunded.isNegative() || refunded.greaterThan(amount))
    problems.push(`refunded_amount ${c.refunded_amount} outside 0..amount ${c.amount}`);
  const full = amount.greaterThan(0) && refunded.greaterThanOrEqualTo(amount);
  if (c.status === 'reversed') {
    if (!refunded.equals(amount))
      problems.push(`reversed, but refunded_amount ${c.refunded_amount} is not the amount ${c.amount}`);
    if (c.reversed_at === null) problems.push('reversed, but reversed_at is null');
    if (c.commission_amount !== 0) problems.push(`reversed, but commission_amount is ${c.commission_amount}, not 0`);
  } else if (c.status === 'approved') {
    if (full) problems.push(`approved, but refunded in full (${c.refunded_amount} of ${c.amount})`);
    if (c.reversed_at !== null) problems.push(`approved, but reversed_at is ${c.reversed_at}`);
    const expected = Number(
      commissionAfterRefund(
        computeCommission(rule, c.amount, c.currency),
        amount.toString(),
        refunded.toString(),
        c.currency,
      ),
    );
    if (c.commission_amount !== expected) {
      problems.push(
        `commission_amount ${c.commission_amount}, but the program's rule on ${c.amount} with ${c.refunded_amount} refunded gives ${expected}`,
      );
    }
  } else {
    problems.push(`unknown status ${c.status}`);
  }
  if (c.reversed_at !== null && Date.parse(c.reversed_at) < Date.parse(c.occurred_at))
    problems.push(`reversed_at ${c.reversed_at} before occurred_at ${c.occurred_at}`);
  return problems;
}

function operation(doc: OpenAPIObject, path: string, method: string): OperationObject {
  return (doc.paths[path] as Record<string, OperationObject>)[method];
}

describe('examples of openapi/openapi.json', () => {
  const program = (operation(committed, '/api/programs/{id}', 'get').responses['200'] as ResponseObject).content![
    'application/json'
  ].example.data.program as CommissionRule;

  it('show conversions that are consistent in themselves: status, refunded_amount, reversed_at and commission agree', () => {
    const conversions = conversionExamples(committed);
    // create (200, 201), list, get and refund at least.
    expect(conversions.length).toBeGreaterThanOrEqual(5);
    const problems = conversions.flatMap(([where, c]) => conversionProblems(c, program).map((p) => `${where}: ${p}`));
    expect(problems).toEqual([]);
  });

  it('show each case of a conversion: approved with nothing refunded, partly refunded, fully refunded', () => {
    const cases = new Set(
      conversionExamples(committed).map(([, c]) =>
        c.status === 'reversed' ? 'fully refunded' : c.refunded_amount > 0 ? 'partly refunded' : 'approved',
      ),
    );
    expect([...cases].sort()).toEqual(['approved', 'fully refunded', 'partly refunded']);
    // A refund's answer shows both refunds, named; the recorded conversion is untouched.
    const refund = (operation(committed, '/api/conversions/{id}/refund', 'post').responses['200'] as ResponseObject)
      .content!['application/json'];
    const states = exampleValues(refund).map((v) => (v as { data: { conversion: ConversionExample } }).data.conversion);
    expect(states.map((c) => [c.status, c.refunded_amount > 0])).toEqual([
      ['reversed', true],
      ['approved', true],
    ]);
    const created = (operation(committed, '/api/conversions', 'post').responses['201'] as ResponseObject).content![
      'application/json'
    ].example.data.conversion;
    expect(created).toMatchObject({ status: 'approved', refunded_amount: 0, reversed_at: null });
  });

  it('the checker catches an inconsistent conversion (approved, refunded, with reversed_at)', () => {
    const good = {
      amount: 49.99,
      currency: 'USD',
      commission_amount: 15,
      status: 'approved',
      refunded_amount: 0,
      reversed_at: null,
      occurred_at: '2025-03-14T09:26:53.000Z',
    };
    expect(conversionProblems(good, program)).toEqual([]);
    expect(
      conversionProblems({ ...good, refunded_amount: 1, reversed_at: '2025-03-14T09:26:53.000Z' }, program),
    ).toHaveLength(2);
    expect(
      conversionProblems(
        { ...good, status: 'reversed', refunded_amount: 49.99, reversed_at: '2025-03-15T00:00:00.000Z' },
        program,
      ),
    ).toEqual(['reversed, but commission_amount is 15, not 0']);
    expect(conversionProblems({ ...good, refunded_amount: 20 }, program)).toEqual([
      "commission_amount 15, but the program's rule on 49.99 with 20 refunded gives 9",
    ]);
  });
});

describe('request bodies of openapi/openapi.json, as the service takes them', () => {
  const refundPath = '/api/conversions/{id}/refund';
  const publicPaths = [
    '/public/organizations/{organizationId}/clicks',
    '/public/organizations/{organizationId}/customers',
  ];

  it('a body is required exactly where the contract refuses a request without one', () => {
    for (const route of routesOf(contract)) {
      if (route.method === 'GET' || !('body' in route) || !(route.body instanceof z.ZodType)) continue;
      const op = operation(committed, route.path.replace(/:(\w+)/g, '{$1}'), route.method.toLowerCase());
      const required = (op.requestBody as RequestBodyObject).required;
      expect(required, `${route.method} ${route.path}`).toBe(!route.body.safeParse(undefined).success);
    }
    expect((operation(committed, refundPath, 'post').requestBody as RequestBodyObject).required).toBe(false);
  });

  it('the public endpoints take JSON as application/json or as text/plain (what the snippet sends), the same JSON in both', () => {
    for (const path of publicPaths) {
      const content = (operation(committed, path, 'post').requestBody as RequestBodyObject).content;
      expect(Object.keys(content).sort(), path).toEqual(['application/json', 'text/plain']);
      expect(content['text/plain'].schema).toMatchObject({ type: 'string' });
      expect(JSON.parse(content['text/plain'].example as string)).toEqual(content['application/json'].example);
    }
    // Everything else takes JSON only.
    for (const [path, method, op] of operations(committed)) {
      if (publicPaths.includes(path) || !op.requestBody) continue;
      expect(Object.keys((op.requestBody as RequestBodyObject).content), `${method} ${path}`).toEqual([
        'application/json',
      ]);
    }
  });

  it('the service refunds in full a POST without a body, as the document allows', async () => {
    const m = await createMerchant();
    const sale = await m.api.post('/api/conversions', { external_id: 'in_nobody_1', amount: 49.99, ref: m.slug });
    expect(sale.status).toBe(201);
    // No body and no Content-Type at all.
    const res = await request('POST', `/api/conversions/in_nobody_1/refund`, { key: m.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.conversion).toMatchObject({
      status: 'reversed',
      refunded_amount: 49.99,
      commission_amount: 0,
    });
  });

  it('the public endpoints answer every content type the document declares, and refuse one it does not', async () => {
    // A browser's user agent: a bot's click is answered 200 and not recorded.
    const BROWSER =
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
    const m = await createMerchant();
    const clicks = `/public/organizations/${m.id}/clicks`;
    const content = (operation(committed, publicPaths[0], 'post').requestBody as RequestBodyObject).content;
    for (const type of Object.keys(content)) {
      const res = await request('POST', clicks, {
        rawBody: JSON.stringify({ ref: m.slug }),
        headers: { 'content-type': `${type};charset=UTF-8`, 'user-agent': BROWSER },
      });
      expect(res.status, `${type}: ${JSON.stringify(res.body)}`).toBe(201);
    }
    const form = await request('POST', clicks, {
      rawBody: `ref=${m.slug}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': BROWSER },
    });
    expect(form.status).toBe(415);
  });
});

describe('GET /openapi.json', () => {
  it('serves the committed document, public, with the base URL it was reached at', async () => {
    const { baseUrl } = await testServer();
    const res = await fetch(`${baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const served = (await res.json()) as OpenAPIObject;
    expect(served.servers).toEqual([{ url: baseUrl, description: 'This service.' }]);
    expect({ ...served, servers: committed.servers }).toEqual(committed);
  });

  it("is configured by PUBLIC_BASE_URL and LEGACY_BASE_URL, rows of the README's configuration table", () => {
    // config.ts is the only reader of process.env, and promises a README row for every setting.
    const source = readFileSync(new URL('../../server/src/config.ts', import.meta.url), 'utf8');
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const name of ['PUBLIC_BASE_URL', 'LEGACY_BASE_URL']) {
      expect(source, name).toMatch(new RegExp(`^ +${name}: `, 'm'));
      expect(readme, name).toMatch(new RegExp(`^\\| \`${name}\` \\| [^|]+ \\| .*openapi\\.json.* \\|$`, 'm'));
    }
  });
});
