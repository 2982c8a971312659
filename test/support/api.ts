import { expect } from 'vitest';
import { TEST_ADMIN_TOKEN, testServer } from './server.js';
import { assertDocumentedResponse } from './openapi-validation.js';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function request<T = any>(
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const { baseUrl } = await testServer();
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  // Every response is held to openapi/openapi.json (operation, status, body schema).
  assertDocumentedResponse(method, path, res.status, text, res.headers.get('content-type'));
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the test sees the text
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** A client bound to one API key. */
export function api(key: string) {
  return {
    get: <T = any>(path: string) => request<T>('GET', path, { key }),
    post: <T = any>(path: string, body?: unknown) => request<T>('POST', path, { key, body }),
    patch: <T = any>(path: string, body?: unknown) => request<T>('PATCH', path, { key, body }),
    put: <T = any>(path: string, body?: unknown) => request<T>('PUT', path, { key, body }),
    delete: <T = any>(path: string) => request<T>('DELETE', path, { key }),
  };
}
export type Api = ReturnType<typeof api>;

export function admin() {
  return {
    post: <T = any>(path: string, body?: unknown) =>
      request<T>('POST', path, { body, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } }),
    get: <T = any>(path: string) =>
      request<T>('GET', path, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } }),
    delete: <T = any>(path: string) =>
      request<T>('DELETE', path, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } }),
  };
}

let orgCounter = 0;

/** A new organization with its API keys (live, and test: `testKey`, `testApi`): every test works in an organization of its own. */
export async function createOrganization(name = `Org ${++orgCounter} ${Date.now()}`) {
  const res = await admin().post('/admin/organizations', { name });
  expect(res.status).toBe(201);
  const key: string = res.body.data.api_key;
  const testKey: string = res.body.data.test_api_key;
  return {
    id: res.body.data.organization.id as string,
    name,
    key,
    keyId: res.body.data.api_key_info.id as string,
    api: api(key),
    testKey,
    testKeyId: res.body.data.test_api_key_info.id as string,
    testApi: api(testKey),
  };
}

/** An organization with one program and one affiliate: the starting point of most flows. */
export async function createMerchant(program: Record<string, unknown> = {}) {
  const org = await createOrganization();
  const p = await org.api.post('/api/programs', { name: 'Main', commission_value: 30, ...program });
  expect(p.status).toBe(201);
  const slug = `aff-${Math.random().toString(36).slice(2, 10)}`;
  const a = await org.api.post('/api/affiliates', {
    email: `${slug}@example.com`,
    program_id: p.body.data.program.id,
    slug,
  });
  expect(a.status).toBe(201);
  return { ...org, program: p.body.data.program, affiliate: a.body.data.affiliate, slug };
}

export function expectError(res: ApiResponse, status: number, message?: string | RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(['message', 'success']);
  expect(res.body.success).toBe(false);
  expect(typeof res.body.message).toBe('string');
  if (typeof message === 'string') expect(res.body.message).toBe(message);
  else if (message) expect(res.body.message).toMatch(message);
}
