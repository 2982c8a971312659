import { readFileSync } from 'node:fs';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import type { OpenAPIObject, OperationObject, ResponseObject } from 'openapi3-ts/oas30';
import { describe, expect, it } from 'vitest';
import { contract } from '@affiliate-attribution/contract';
import { buildOpenApiDocument, serializeDocument } from '../../openapi/document.js';
import { DOCUMENT_PATH, TYPES_PATH, generateTypes } from '../../openapi/generate.js';
import { testServer } from '../support/server.js';

const committedText = readFileSync(DOCUMENT_PATH, 'utf8');
const committed = JSON.parse(committedText) as OpenAPIObject;

function routesOf(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((v) => (isAppRoute(v) ? [v] : routesOf(v as AppRouter)));
}

function operations(doc: OpenAPIObject): [string, string, OperationObject][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, OperationObject>).map(([method, op]) => [path, method, op] as [string, string, OperationObject]),
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
    const routes = routesOf(contract as unknown as AppRouter);
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const op = (committed.paths[route.path.replace(/:(\w+)/g, '{$1}')] as Record<string, OperationObject> | undefined)?.[route.method.toLowerCase()];
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
      expect(tags.has(op.tags![0]!), `${where}: tag not declared`).toBe(true);
      expect(Array.isArray(op.security), `${where}: security`).toBe(true);
      for (const p of op.parameters ?? []) expect((p as { description?: string }).description, `${where} ${JSON.stringify(p)}`).toBeTruthy();
      const media = Object.values((op.requestBody as { content?: Record<string, { example?: unknown }> } | undefined)?.content ?? {});
      for (const m of media) expect(m.example, `${where}: request example`).toBeDefined();
      for (const [status, response] of Object.entries(op.responses as Record<string, ResponseObject>)) {
        const json = response.content?.['application/json'];
        expect(json, `${where} ${status}: no JSON schema`).toBeDefined();
        expect(json!.example, `${where} ${status}: no example`).toBeDefined();
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
    const me = (committed.paths['/api/me'] as Record<string, OperationObject>).get!;
    expect(me.security).toEqual([{ ApiKey: [] }, { ApiKeyBearer: [] }]);
    const admin = (committed.paths['/admin/organizations'] as Record<string, OperationObject>).post!;
    expect(admin.security).toEqual([{ AdminToken: [] }]);
  });

  it('writes servers for given hosts (the legacy one second)', () => {
    const doc = buildOpenApiDocument({
      servers: [{ url: 'https://api.acme.example' }, { url: 'https://legacy.acme.example' }],
    });
    expect(doc.servers?.map((s) => s.url)).toEqual(['https://api.acme.example', 'https://legacy.acme.example']);
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
});
