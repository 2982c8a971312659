import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN_TOKEN } from '../support/server.js';
import { call, ownerSession, session, startService, type PeopleServer } from '../web/support/people.js';

/** The dashboard's test-mode switch: `X-Mode: test` on a session request acts on the test data. */
describe('dashboard sessions in test mode (X-Mode)', () => {
  let service: PeopleServer;
  let base: string;

  beforeAll(async () => {
    service = await startService();
    base = service.baseUrl;
  });
  afterAll(() => service.close());

  it('X-Mode: test reads and writes the test data; without it, live; any other value is 400', async () => {
    const owner = await ownerSession(base, 'Switch Inc');
    const live = session(base, owner.cookie);
    const test = { ...live, 'x-mode': 'test' };

    expect((await call(base, 'GET', '/api/me', { headers: live })).body.data.organization).toEqual({
      id: owner.organization.id,
      name: 'Switch Inc',
      livemode: true,
      link_params: ['ref'],
    });
    expect((await call(base, 'GET', '/api/me', { headers: test })).body.data.organization).toEqual({
      id: owner.organization.id,
      name: 'Switch Inc',
      livemode: false,
      link_params: ['ref'],
    });
    expect(
      (await call(base, 'GET', '/api/me', { headers: { ...live, 'x-mode': 'live' } })).body.data.organization.livemode,
    ).toBe(true);
    expect(await call(base, 'GET', '/api/me', { headers: { ...live, 'x-mode': 'sandbox' } })).toMatchObject({
      status: 400,
      body: {
        success: false,
        message: 'X-Mode: must be "live" or "test" (the dashboard\'s test-mode switch); leave it out for live data',
      },
    });

    const program = await call(base, 'POST', '/api/programs', {
      headers: test,
      body: { name: 'Trial run', commission_value: 10 },
    });
    expect(program.status).toBe(201);
    expect(program.body.data.program.livemode).toBe(false);
    expect((await call(base, 'GET', '/api/programs', { headers: live })).body.data.programs).toEqual([]);
    expect((await call(base, 'GET', `/api/programs/${program.body.data.program.id}`, { headers: live })).status).toBe(
      404,
    );
    expect(
      (await call(base, 'GET', '/api/programs', { headers: test })).body.data.programs.map((p: { id: string }) => p.id),
    ).toEqual([program.body.data.program.id]);

    // A test key of the operator's sees what the test-mode session wrote.
    const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const testKey = (
      await call(base, 'POST', `/admin/organizations/${owner.organization.id}/api-keys`, {
        headers: admin,
        body: { mode: 'test' },
      })
    ).body.data.api_key;
    expect(
      (
        await call(base, 'GET', `/api/programs/${program.body.data.program.id}`, {
          headers: { authorization: `Bearer ${testKey}` },
        })
      ).status,
    ).toBe(200);
  });

  it('keys and people are the account’s in either mode: a key issued in test mode is a test key; the lists show both modes', async () => {
    const owner = await ownerSession(base);
    const live = session(base, owner.cookie);
    const test = { ...live, 'x-mode': 'test' };
    const issued = await call(base, 'POST', '/api/api-keys', { headers: test });
    expect(issued.status).toBe(201);
    expect(issued.body.data.api_key).toMatch(/^svc_test_/);
    expect(issued.body.data.api_key_info.mode).toBe('test');
    for (const headers of [live, test]) {
      const keys = (await call(base, 'GET', '/api/api-keys', { headers })).body.data.api_keys.map(
        (k: { mode: string }) => k.mode,
      );
      expect(keys).toEqual(['live', 'test', 'test']);
      expect(
        (await call(base, 'GET', '/api/users', { headers })).body.data.users.map((u: { email: string }) => u.email),
      ).toEqual([owner.email]);
    }
    const revoked = await call(base, 'DELETE', `/api/api-keys/${issued.body.data.api_key_info.id}`, { headers: live });
    expect(
      (await call(base, 'GET', `/api/api-keys?mode=test`, { headers: live })).body.data.api_keys.map(
        (k: { id: string; revoked_at: string | null }) => [k.id, k.revoked_at !== null],
      ),
    ).toContainEqual([issued.body.data.api_key_info.id, true]);
    expect([revoked.status, revoked.body.data.api_key_info.mode]).toEqual([200, 'test']);
    expect(
      (await call(base, 'GET', '/api/me', { headers: { authorization: `Bearer ${issued.body.data.api_key}` } })).status,
    ).toBe(401);
  });

  it('GET /api/api-keys?mode= lists the keys of one mode, filtered before paging; another mode is 400 naming mode', async () => {
    const owner = await ownerSession(base);
    const live = session(base, owner.cookie);
    const test = { ...live, 'x-mode': 'test' };
    // Oldest first: the sign-up's live and test keys, then three more live keys, then one more test key.
    const liveKeys: string[] = [];
    for (let i = 0; i < 3; i++)
      liveKeys.push((await call(base, 'POST', '/api/api-keys', { headers: live })).body.data.api_key_info.id);
    const lastTest = (await call(base, 'POST', '/api/api-keys', { headers: test })).body.data.api_key_info.id;
    const all = (await call(base, 'GET', '/api/api-keys', { headers: live })).body.data.api_keys as {
      id: string;
      mode: string;
    }[];
    expect(all.map((k) => k.mode)).toEqual(['live', 'test', 'live', 'live', 'live', 'test']);

    // One key a page: every page of mode=test holds a test key, however many live keys lie between.
    for (const headers of [live, test]) {
      const first = await call(base, 'GET', '/api/api-keys?mode=test&limit=1', { headers });
      expect(first.status).toBe(200);
      expect(first.body.data.api_keys).toEqual([all[1]]);
      const second = await call(
        base,
        'GET',
        `/api/api-keys?mode=test&limit=1&cursor=${encodeURIComponent(first.body.data.next_cursor)}`,
        { headers },
      );
      expect(second.body.data.api_keys.map((k: { id: string }) => k.id)).toEqual([lastTest]);
      expect(second.body.data.next_cursor).toBeNull();
    }
    const liveOnly = await call(base, 'GET', '/api/api-keys?mode=live', { headers: test });
    expect(liveOnly.body.data.api_keys.map((k: { id: string }) => k.id)).toEqual([all[0].id, ...liveKeys]);
    expect(liveOnly.body.data.next_cursor).toBeNull();

    const refused = await call(base, 'GET', '/api/api-keys?mode=sandbox', { headers: live });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ success: false, message: expect.stringMatching(/^mode: /) });
  });

  it('"Delete all test data" works from a test-mode session only', async () => {
    const owner = await ownerSession(base);
    const live = session(base, owner.cookie);
    const test = { ...live, 'x-mode': 'test' };
    await call(base, 'POST', '/api/programs', { headers: test, body: { name: 'Trial run', commission_value: 10 } });
    await call(base, 'POST', '/api/programs', { headers: live, body: { name: 'Real', commission_value: 10 } });
    const refused = await call(base, 'DELETE', '/api/test-data', { headers: live });
    expect(refused.status).toBe(403);
    const done = await call(base, 'DELETE', '/api/test-data', { headers: test });
    expect(done.status).toBe(200);
    expect(done.body.data.deleted.programs).toBe(1);
    expect((await call(base, 'GET', '/api/programs', { headers: test })).body.data.programs).toEqual([]);
    expect(
      (await call(base, 'GET', '/api/programs', { headers: live })).body.data.programs.map(
        (p: { name: string }) => p.name,
      ),
    ).toEqual(['Real']);
  });
});
