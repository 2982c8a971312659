import { beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, expectError, request } from '../support/api.js';

describe('GET /api/me and authentication', () => {
  let org: Awaited<ReturnType<typeof createOrganization>>;
  beforeAll(async () => {
    org = await createOrganization('Acme Inc');
  });

  it('returns the organization of the key (Bearer form)', async () => {
    const res = await request('GET', '/api/me', { headers: { authorization: `Bearer ${org.key}` } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { organization: { id: org.id, name: 'Acme Inc', livemode: true, link_params: ['ref'] } },
    });
  });

  it('accepts the bare key form `Authorization: svc-…`', async () => {
    const res = await request('GET', '/api/me', { headers: { authorization: org.key } });
    expect(res.status).toBe(200);
    expect(res.body.data.organization.id).toBe(org.id);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['unknown key', 'svc-thisisnotakeyatall000000000000000000000000'],
    ['wrong prefix', 'sk_live_abc'],
    ['Bearer without key', 'Bearer '],
    ['Basic scheme', 'Basic dXNlcjpwYXNz'],
  ])('401 with the spec message when the key is %s', async (_label, header) => {
    const res = await request('GET', '/api/me', { headers: header === undefined ? {} : { authorization: header } });
    expectError(res, 401, 'Missing or invalid API key');
  });

  it('keys are svc- prefixed and only shown once (listing shows the redacted form)', async () => {
    expect(org.key).toMatch(/^svc-[A-Za-z0-9_-]{43}$/);
  });
});
