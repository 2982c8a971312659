import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeZodError } from '../../server/src/http/validation-message.js';
import { TEST_ADMIN_TOKEN, testServer } from '../support/server.js';
import { createMerchant, createOrganization, expectError, request } from '../support/api.js';

/** Bytes as they are, which `request` (strings only) cannot send. */
async function postBytes(path: string, headers: Record<string, string>, bytes: Buffer) {
  const res = await fetch((await testServer()).baseUrl + path, {
    method: 'POST',
    headers,
    body: new Uint8Array(bytes),
  });
  return { status: res.status, body: await res.json() };
}

const withBytes = (before: string, bytes: number[], after: string) =>
  Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);

describe('every error in the envelope', () => {
  it('malformed JSON: 400', async () => {
    const org = await createOrganization();
    const res = await request('POST', '/api/conversions', {
      key: org.key,
      rawBody: '{"external_id": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 400, 'Malformed JSON body');
  });

  it('a body over 1 MiB: 413', async () => {
    const org = await createOrganization();
    const res = await request('POST', '/api/conversions', {
      key: org.key,
      rawBody: JSON.stringify({ external_id: 'x'.repeat(1024 * 1024 + 10), amount: 1 }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 413);
  });

  it('a non-JSON body where JSON is required: 415', async () => {
    const org = await createOrganization();
    const res = await request('POST', '/api/conversions', {
      key: org.key,
      rawBody: 'external_id=1&amount=2',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(res, 415);
  });

  it('a JSON body that is not an object: 400', async () => {
    const org = await createOrganization();
    const res = await request('POST', '/api/conversions', {
      key: org.key,
      rawBody: '[1,2]',
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 400);
  });

  it('unknown routes and methods: 404', async () => {
    const org = await createOrganization();
    expectError(await request('GET', '/api/nothing-here', { key: org.key }), 404);
    expectError(await request('DELETE', '/api/customers/x', { key: org.key }), 404);
    expectError(await request('GET', '/not-an-api-path'), 404);
  });

  it('authentication comes before validation: no key, bad body is 401', async () => {
    expectError(await request('POST', '/api/conversions', { body: {} }), 401, 'Missing or invalid API key');
  });

  it('authentication comes before the body is read: no key, malformed JSON is 401 on both lanes', async () => {
    for (const path of ['/api/conversions', '/api/programs']) {
      expectError(
        await request('POST', path, { rawBody: '{"external_id": ', headers: { 'content-type': 'application/json' } }),
        401,
        'Missing or invalid API key',
      );
    }
  });

  it('several problems are named, field first', async () => {
    const org = await createOrganization();
    const res = await org.api.post('/api/conversions', { amount: 'x' });
    expectError(res, 400);
    expect(res.body.message).toContain('external_id: Required');
    expect(res.body.message).toContain('amount: Expected number, received string');
  });

  it('responses carry a request id, echoing a sane incoming one', async () => {
    const m = await createMerchant();
    const res = await request('GET', '/api/me', { key: m.key, headers: { 'x-request-id': 'trace-123' } });
    expect(res.headers.get('x-request-id')).toBe('trace-123');
    const fresh = await request('GET', '/api/me', { key: m.key });
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers are JSON with the right content type, and no framework fingerprint', async () => {
    const res = await request('GET', '/api/me');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-powered-by')).toBeNull();
  });
});

describe('bodies that are not valid UTF-8: 400, never decoded with replacement characters', () => {
  // A lenient decoder makes each of these U+FFFD: "ord-\xff" and "ord-\xfe" would be one external_id.
  const MALFORMED: Record<string, number[]> = {
    'a byte never valid in UTF-8': [0xff],
    'another one': [0xfe],
    'an overlong encoding of "/"': [0xc0, 0xaf],
    'an encoded UTF-16 surrogate': [0xed, 0xa0, 0x80],
    'a truncated sequence': [0xe2, 0x82],
  };

  it('every JSON body route: hot lane, Express, /admin and the public snippet endpoints (text/plain too)', async () => {
    const m = await createMerchant();
    const json = { 'content-type': 'application/json' };
    for (const [name, bytes] of Object.entries(MALFORMED)) {
      const cases: [string, Record<string, string>, Buffer][] = [
        [
          '/api/conversions',
          { ...json, authorization: `Bearer ${m.key}` },
          withBytes('{"external_id":"ord-', bytes, `","amount":1,"ref":"${m.slug}"}`),
        ],
        [
          '/api/programs',
          { ...json, authorization: `Bearer ${m.key}` },
          withBytes('{"name":"P', bytes, '","commission_value":10}'),
        ],
        [
          '/admin/organizations',
          { ...json, authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
          withBytes('{"name":"O', bytes, '"}'),
        ],
        [`/public/organizations/${m.id}/clicks`, { 'content-type': 'text/plain' }, withBytes('{"ref":"', bytes, '"}')],
        [
          `/public/organizations/${m.id}/customers`,
          json,
          withBytes('{"customerId":"c-', bytes, `","cookieId":"${m.slug}"}`),
        ],
      ];
      for (const [path, headers, body] of cases) {
        expect([name, path, await postBytes(path, headers, body)]).toEqual([
          name,
          path,
          { status: 400, body: { success: false, message: 'Body is not valid UTF-8' } },
        ]);
      }
    }
  });

  it('valid UTF-8 beyond ASCII is accepted and kept exactly, with or without a byte order mark', async () => {
    const m = await createMerchant();
    const id = 'cüs-€-😀';
    const created = await postBytes(
      '/api/customers',
      { 'content-type': 'application/json', authorization: `Bearer ${m.key}` },
      Buffer.from(JSON.stringify({ customer_id: id, ref: m.slug })),
    );
    expect([created.status, created.body.data.customer.customer_id]).toEqual([201, id]);
    const bom = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(JSON.stringify({ customerId: `${id}-2`, cookieId: m.slug })),
    ]);
    const viaSnippet = await postBytes(
      `/public/organizations/${m.id}/customers`,
      { 'content-type': 'text/plain' },
      bom,
    );
    expect([viaSnippet.status, viaSnippet.body.data.customer.customer_id]).toEqual([201, `${id}-2`]);
  });

  it('a charset other than UTF-8 (which body-parser would decode): 415', async () => {
    const m = await createMerchant();
    const res = await postBytes(
      '/api/programs',
      { 'content-type': 'application/json; charset=utf-16le', authorization: `Bearer ${m.key}` },
      Buffer.from(JSON.stringify({ name: 'P', commission_value: 10 }), 'utf16le'),
    );
    expect(res).toEqual({ status: 415, body: { success: false, message: 'Unsupported charset; send UTF-8 JSON' } });
  });
});

describe('error messages repeat at most 100 characters of the input', () => {
  const cut = (text: string) => `${text.slice(0, 100)}…`;

  it('an enum value of 100 KB, on the hot lane and on Express', async () => {
    const m = await createMerchant();
    const long = 'x'.repeat(100_000);
    const hot = await m.api.post('/api/conversions', { external_id: 'echo-1', amount: 1, ref: m.slug, kind: long });
    expectError(hot, 400, `kind: Invalid enum value. Expected 'initial' | 'recurring', received '${cut(long)}'`);
    const viaExpress = await m.api.post('/api/programs', { name: 'P', commission_value: 10, commission_type: long });
    expectError(
      viaExpress,
      400,
      `commission_type: Invalid enum value. Expected 'percent' | 'flat', received '${cut(long)}'`,
    );
  });

  it('an unknown path (10 KB: the header section caps paths at 16 KiB)', async () => {
    const m = await createMerchant();
    const path = `/api/${'p'.repeat(10_000)}`;
    expectError(await request('GET', path, { key: m.key }), 404, `Not found: GET ${cut(path)}`);
  });

  it("a client's own key in a field's path", () => {
    const key = 'k'.repeat(100_000);
    const error = z.record(z.number()).safeParse({ [key]: 'not a number' }).error!;
    expect(describeZodError(error)).toBe(`${cut(key)}: Expected number, received string`);
  });

  it('a value holding `$&` replacement patterns is cut, not expanded', () => {
    const value = '$&'.repeat(50_000);
    const error = z.enum(['x']).safeParse(value).error!;
    expect(describeZodError(error, 'kind')).toBe(`kind: Invalid enum value. Expected 'x', received '${cut(value)}'`);
  });

  it('never splits a surrogate pair', () => {
    const value = `${'a'.repeat(99)}😀${'b'.repeat(1000)}`;
    const error = z.enum(['x']).safeParse(value).error!;
    expect(describeZodError(error, 'kind')).toBe(
      `kind: Invalid enum value. Expected 'x', received '${'a'.repeat(99)}…'`,
    );
  });
});
