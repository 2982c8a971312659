import { describe, expect, it } from 'vitest';
import { admin, api, createOrganization, expectError, request } from '../support/api.js';

describe('operator API (/admin)', () => {
  it('creates an organization with a key shown once', async () => {
    const res = await admin().post('/admin/organizations', { name: 'Globex' });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.data.organization).toEqual({ id: expect.any(String), name: 'Globex', livemode: true });
    expect(res.body.data.api_key).toMatch(/^svc-/);
    expect(res.body.data.api_key_info).toMatchObject({
      redacted: expect.stringMatching(/^svc-.{4}….{4}$/),
      mode: 'live',
      revoked_at: null,
    });
    expect(res.body.data.test_api_key).toMatch(/^svc_test_/);
    expect(res.body.data.test_api_key_info).toMatchObject({
      redacted: expect.stringMatching(/^svc_test_.{4}….{4}$/),
      mode: 'test',
      revoked_at: null,
    });
    const me = await api(res.body.data.api_key).get('/api/me');
    expect(me.body.data.organization).toEqual({
      id: res.body.data.organization.id,
      name: 'Globex',
      livemode: true,
      link_params: ['ref'],
    });
    const testMe = await api(res.body.data.test_api_key).get('/api/me');
    expect(testMe.body.data.organization).toEqual({
      id: res.body.data.organization.id,
      name: 'Globex',
      livemode: false,
      link_params: ['ref'],
    });
  });

  it.each([
    ['no token', {}],
    ['a wrong token', { authorization: 'Bearer not-the-admin-token' }],
    ['an API key instead of the token', { authorization: 'Bearer svc-abc' }],
  ])('answers 401 with %s', async (_label, headers) => {
    const res = await request('POST', '/admin/organizations', { body: { name: 'X' }, headers });
    expectError(res, 401);
  });

  it('validates the body', async () => {
    expectError(await admin().post('/admin/organizations', {}), 400, /^name: /);
    expectError(await admin().post('/admin/organizations', { name: '' }), 400, /^name: /);
  });

  it('rotates keys: issue a second key, both work, revoke the first, it is refused', async () => {
    const org = await createOrganization();
    const issued = await admin().post(`/admin/organizations/${org.id}/api-keys`);
    expect(issued.status).toBe(201);
    const second: string = issued.body.data.api_key;
    expect(second).not.toBe(org.key);
    expect((await api(second).get('/api/me')).status).toBe(200);
    expect((await org.api.get('/api/me')).status).toBe(200);

    const listed = await admin().get(`/admin/organizations/${org.id}/api-keys`);
    expect(listed.status).toBe(200);
    // The first live key, the first test key (made with the organization), the second live key.
    expect(listed.body.data.api_keys.map((k: { id: string; mode: string }) => [k.id, k.mode])).toEqual([
      [org.keyId, 'live'],
      [org.testKeyId, 'test'],
      [issued.body.data.api_key_info.id, 'live'],
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(org.testKey);
    expect(JSON.stringify(listed.body)).not.toContain(org.key);
    expect(JSON.stringify(listed.body)).not.toContain(second);

    const revoked = await admin().delete(`/admin/organizations/${org.id}/api-keys/${org.keyId}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.api_key_info.revoked_at).toEqual(expect.any(String));
    expectError(await org.api.get('/api/me'), 401, 'Missing or invalid API key');
    expect((await api(second).get('/api/me')).status).toBe(200);
  });

  it('404 for unknown organizations and keys', async () => {
    expectError(await admin().post('/admin/organizations/00000000-0000-4000-8000-000000000000/api-keys'), 404);
    expectError(await admin().get('/admin/organizations/not-a-uuid/api-keys'), 404);
    const org = await createOrganization();
    expectError(
      await admin().delete(`/admin/organizations/${org.id}/api-keys/00000000-0000-4000-8000-000000000000`),
      404,
    );
    const other = await createOrganization();
    expectError(await admin().delete(`/admin/organizations/${other.id}/api-keys/${org.keyId}`), 404);
  });
});
