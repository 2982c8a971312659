import { describe, expect, it } from 'vitest';
import { createMerchant, createOrganization, expectError, request } from '../support/api.js';

describe('every error in the envelope', () => {
  it('malformed JSON: 400', async () => {
    const org = await createOrganization();
    const res = await request('POST', '/api/conversions', { key: org.key, rawBody: '{"external_id": ', headers: { 'content-type': 'application/json' } });
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
    const res = await request('POST', '/api/conversions', { key: org.key, rawBody: 'external_id=1&amount=2', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectError(res, 415);
  });

  it('a JSON body that is not an object: 400', async () => {
    const org = await createOrganization();
    const res = await request('POST', '/api/conversions', { key: org.key, rawBody: '[1,2]', headers: { 'content-type': 'application/json' } });
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
