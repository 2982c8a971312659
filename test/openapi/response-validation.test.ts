import { readFileSync } from 'node:fs';
import type { OpenAPIObject, OperationObject } from 'openapi3-ts/oas30';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, request } from '../support/api.js';
import { ResponseValidator } from '../support/openapi-validation.js';
import { testServer } from '../support/server.js';

const document = JSON.parse(
  readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8'),
) as OpenAPIObject;
const json = 'application/json; charset=utf-8';

describe('response validation against openapi/openapi.json (the hook in request())', () => {
  const validator = new ResponseValidator(document);

  it('accepts a documented status with a matching body', () => {
    const body = JSON.stringify({
      success: true,
      data: {
        organization: {
          id: '3f2b8c1e-7d4a-4e9b-8a61-2c5d9f0e4b7a',
          name: 'Acme',
          livemode: true,
          link_params: ['ref'],
        },
      },
    });
    expect(validator.check('GET', '/api/me', 200, body, json)).toBeUndefined();
  });

  it('fails an undocumented status', () => {
    const body = JSON.stringify({ success: false, message: 'Conflict' });
    expect(validator.check('GET', '/api/me', 409, body, json)).toMatch(
      /status 409 is not documented for operation meGet/,
    );
  });

  it('fails a body that does not match, and a field the document does not describe', () => {
    expect(validator.check('GET', '/api/me', 200, JSON.stringify({ success: true, data: {} }), json)).toMatch(
      /organization/,
    );
    const extra = JSON.stringify({
      success: true,
      data: { organization: { id: '3f2b8c1e-7d4a-4e9b-8a61-2c5d9f0e4b7a', name: 'Acme', livemode: true, secret: 1 } },
    });
    expect(validator.check('GET', '/api/me', 200, extra, json)).toMatch(/must NOT have additional properties "secret"/);
    expect(validator.check('GET', '/api/me', 401, JSON.stringify({ success: false, error: 'x' }), json)).toMatch(
      /does not match/,
    );
  });

  it('fails a success from a route the document does not have, accepts an error envelope there', () => {
    expect(validator.check('GET', '/api/undocumented', 200, '{}', json)).toMatch(/does not describe/);
    expect(
      validator.check(
        'GET',
        '/api/undocumented',
        404,
        JSON.stringify({ success: false, message: 'Not found: GET /api/undocumented' }),
        json,
      ),
    ).toBeUndefined();
    expect(validator.check('GET', '/api/undocumented', 404, 'Not Found', 'text/html')).toMatch(/expected a JSON body/);
  });

  it('matches path parameters and the query string', () => {
    expect(validator.match('GET', '/api/customers/cus_123')?.operation.operationId).toBe('customersGet');
    const body = JSON.stringify({ success: false, message: 'Not found' });
    expect(validator.check('GET', '/api/customers/cus_123?x=1', 404, body, json)).toBeUndefined();
  });

  it('skips only the allow-listed non-API paths and CORS preflights', () => {
    expect(validator.check('GET', '/snippet.js', 200, 'x', 'application/javascript')).toBeUndefined();
    expect(validator.check('OPTIONS', '/public/organizations/x/clicks', 204, '', null)).toBeUndefined();
  });

  describe('on the live server', () => {
    beforeAll(async () => {
      await testServer();
    });

    it('request() throws when the server answers something the document lacks', async () => {
      // The real server's 401, held to a document that no longer lists 401 for GET /api/me.
      const pruned = structuredClone(document);
      delete ((pruned.paths['/api/me'] as Record<string, OperationObject>).get.responses as Record<string, unknown>)[
        '401'
      ];
      const strict = new ResponseValidator(pruned);
      const { baseUrl } = await testServer();
      const res = await fetch(`${baseUrl}/api/me`);
      expect(strict.check('GET', '/api/me', res.status, await res.text(), res.headers.get('content-type'))).toMatch(
        /status 401 is not documented/,
      );
      // and request() itself validates: a documented answer passes through it.
      const ok = await request('GET', '/api/me');
      expect(ok.status).toBe(401);
    });
  });
});

describe('security as documented', () => {
  it('operations with security answer 401 without credentials; public ones do not', async () => {
    await createOrganization();
    const checked: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, OperationObject>)) {
        const concrete = path.replace(/\{[^}]+\}/g, '3f2b8c1e-7d4a-4e9b-8a61-2c5d9f0e4b7a');
        const hasBody = ['post', 'put', 'patch'].includes(method);
        const res = await request(method.toUpperCase(), concrete, hasBody ? { body: {} } : {});
        const where = `${method.toUpperCase()} ${path} -> ${res.status} ${JSON.stringify(res.body)}`;
        if ((op.security ?? []).length > 0) expect(res.status, where).toBe(401);
        else expect(res.status, where).not.toBe(401);
        checked.push(op.operationId!);
      }
    }
    expect(checked.length).toBe(Object.values(document.paths).flatMap((i) => Object.keys(i as object)).length);
  });
});
