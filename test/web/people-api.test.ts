import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  ownerSession,
  PASSWORD,
  session,
  sessionCookieOf,
  signIn,
  startService,
  type PeopleServer,
} from './support/people.js';

/** Users, sessions and invitations, over HTTP: the dashboard's credential on the API's routes. */
let service: PeopleServer;
let base: string;

beforeAll(async () => {
  service = await startService();
  base = service.baseUrl;
}, 60_000);
afterAll(() => service?.close());

describe('the first owner', () => {
  it('is invited by the operator, accepts, signs in, and the session answers the API as the organization', async () => {
    const owner = await ownerSession(base, 'Acme');
    const me = await call(base, 'GET', '/api/me', { headers: { cookie: owner.cookie } });
    expect(me).toMatchObject({
      status: 200,
      body: { success: true, data: { organization: { id: owner.organization.id, name: 'Acme' } } },
    });
    // the invitation is spent
    const again = await call(base, 'POST', '/auth/invitations/accept', {
      body: { token: new URL(owner.acceptUrl).searchParams.get('token'), name: 'X', password: PASSWORD },
    });
    expect(again).toMatchObject({
      status: 404,
      body: { success: false, message: 'This invitation is not valid: it was used, revoked or has expired' },
    });
  });

  it('session cookies are HttpOnly and SameSite=Lax (Secure when the public URL is https)', async () => {
    const owner = await ownerSession(base);
    const res = await fetch(`${base}/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ email: owner.email, password: PASSWORD }),
    });
    const cookie = res.headers.getSetCookie().find((c) => c.includes('session_token='))!;
    expect(cookie).toMatch(/^svc\.session_token=/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i);

    const https = await startService({ PUBLIC_BASE_URL: 'https://affiliates.example.com' }, service.db);
    try {
      const secure = await fetch(`${https.baseUrl}/auth/sign-in/email`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'https://affiliates.example.com' },
        body: JSON.stringify({ email: owner.email, password: PASSWORD }),
      });
      expect(secure.status).toBe(200);
      const secureCookie = secure.headers.getSetCookie().find((c) => c.includes('session_token='))!;
      expect(secureCookie).toMatch(/^__Secure-svc\.session_token=.*; .*Secure/i);
      expect(secureCookie).toMatch(/HttpOnly/i);
    } finally {
      await https.close();
    }
  });

  it('a wrong password is refused, and an unknown or missing session is the same 401 as a missing key', async () => {
    const owner = await ownerSession(base);
    const wrong = await fetch(`${base}/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ email: owner.email, password: 'not the password' }),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.getSetCookie()).toEqual([]);
    for (const cookie of [undefined, 'svc.session_token=forged.value']) {
      const res = await call(base, 'GET', '/api/programs', { headers: cookie ? { cookie } : {} });
      expect(res).toEqual(
        expect.objectContaining({ status: 401, body: { success: false, message: 'Missing or invalid API key' } }),
      );
    }
  });

  it('sign-out ends the session; sign-out everywhere ends all of them', async () => {
    const owner = await ownerSession(base);
    const second = await signIn(base, owner.email, PASSWORD);
    const out = await fetch(`${base}/auth/sign-out`, {
      method: 'POST',
      headers: { cookie: owner.cookie, origin: base },
    });
    expect(out.status).toBe(200);
    expect((await call(base, 'GET', '/api/me', { headers: { cookie: owner.cookie } })).status).toBe(401);
    expect((await call(base, 'GET', '/api/me', { headers: { cookie: second } })).status).toBe(200);
    const third = await signIn(base, owner.email, PASSWORD);
    const everywhere = await fetch(`${base}/auth/revoke-sessions`, {
      method: 'POST',
      headers: { cookie: third, origin: base, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(everywhere.status).toBe(200);
    expect((await call(base, 'GET', '/api/me', { headers: { cookie: second } })).status).toBe(401);
    expect((await call(base, 'GET', '/api/me', { headers: { cookie: third } })).status).toBe(401);
  });
});

describe('one contract, two credentials', () => {
  it('an API key request is unaffected by a session cookie beside it: the key decides', async () => {
    const a = await ownerSession(base);
    const b = await ownerSession(base);
    const res = await call(base, 'GET', '/api/me', {
      headers: { authorization: `Bearer ${b.apiKey}`, cookie: a.cookie },
    });
    expect(res.body.data.organization.id).toBe(b.organization.id);
    const bad = await call(base, 'GET', '/api/me', { headers: { authorization: 'Bearer svc-nope', cookie: a.cookie } });
    expect(bad.status).toBe(401);
  });

  it('the session creates and reads through the same routes; organization B sees nothing of A, URL tampering included', async () => {
    const a = await ownerSession(base);
    const b = await ownerSession(base);
    const program = await call(base, 'POST', '/api/programs', {
      headers: session(base, a.cookie),
      body: { name: 'A program', commission_value: 20 },
    });
    expect(program.status).toBe(201);
    const id = program.body.data.program.id;
    expect((await call(base, 'GET', `/api/programs/${id}`, { headers: { cookie: a.cookie } })).status).toBe(200);
    expect(await call(base, 'GET', `/api/programs/${id}`, { headers: { cookie: b.cookie } })).toMatchObject({
      status: 403,
      body: { success: false },
    });
    expect(
      (
        await call(base, 'PATCH', `/api/programs/${id}`, {
          headers: session(base, b.cookie),
          body: { name: 'Mine now' },
        })
      ).status,
    ).toBe(403);
    const listB = await call(base, 'GET', '/api/programs', { headers: { cookie: b.cookie } });
    expect(listB.body.data.programs).toEqual([]);
    const usersB = await call(base, 'GET', '/api/users', { headers: { cookie: b.cookie } });
    expect(usersB.body.data.users.map((u: { email: string }) => u.email)).toEqual([b.email]);
    const keysA = await call(base, 'GET', '/api/api-keys', { headers: { cookie: a.cookie } });
    const keyOfA = keysA.body.data.api_keys[0].id;
    expect(await call(base, 'DELETE', `/api/api-keys/${keyOfA}`, { headers: session(base, b.cookie) })).toMatchObject({
      status: 404,
    });
    const userOfA = (await call(base, 'GET', '/api/users', { headers: { cookie: a.cookie } })).body.data.users[0].id;
    expect((await call(base, 'DELETE', `/api/users/${userOfA}`, { headers: session(base, b.cookie) })).status).toBe(
      404,
    );
  });

  it('a cross-site state-changing request on a session is refused (CSRF); the same from the dashboard passes', async () => {
    const owner = await ownerSession(base);
    const evil = await call(base, 'POST', '/api/programs', {
      headers: { cookie: owner.cookie, origin: 'https://evil.example' },
      body: { name: 'x', commission_value: 1 },
    });
    expect(evil).toEqual(
      expect.objectContaining({
        status: 403,
        body: {
          success: false,
          message: 'Cross-site request refused: a dashboard session only works from the dashboard',
        },
      }),
    );
    const noOrigin = await call(base, 'POST', '/api/programs', {
      headers: { cookie: owner.cookie, 'sec-fetch-site': 'cross-site' },
      body: { name: 'x', commission_value: 1 },
    });
    expect(noOrigin.status).toBe(403);
    // a form post (not JSON) from another site, were the cookie sent at all
    const form = await fetch(`${base}/api/programs`, {
      method: 'POST',
      headers: {
        cookie: owner.cookie,
        origin: 'https://evil.example',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'name=x',
    });
    expect(form.status).toBe(403);
    // better-auth's own endpoints check the origin too
    const signOut = await fetch(`${base}/auth/sign-out`, {
      method: 'POST',
      headers: { cookie: owner.cookie, origin: 'https://evil.example' },
    });
    expect(signOut.status).toBe(403);
    const ok = await call(base, 'POST', '/api/programs', {
      headers: session(base, owner.cookie),
      body: { name: 'x', commission_value: 1 },
    });
    expect(ok.status).toBe(201);
  });
});

describe('the team', () => {
  it('owners invite members; a member cannot see or create API keys, integrations or the team, but runs the program', async () => {
    const owner = await ownerSession(base);
    const headers = session(base, owner.cookie);
    const email = `member-${Date.now()}@example.com`;
    const invited = await call(base, 'POST', '/api/invitations', { headers, body: { email: email.toUpperCase() } });
    expect(invited).toMatchObject({
      status: 201,
      body: { data: { invitation: { email, role: 'member', status: 'pending' } } },
    });
    expect(invited.body.data.accept_url).toMatch(
      new RegExp(`^${base}/dashboard/accept-invitation\\?token=[A-Za-z0-9_-]{43}$`),
    );
    const dup = await call(base, 'POST', '/api/invitations', { headers, body: { email: owner.email } });
    expect(dup).toMatchObject({ status: 409, body: { message: 'A user with this e-mail already exists' } });
    const token = new URL(invited.body.data.accept_url).searchParams.get('token');
    const weak = await call(base, 'POST', '/auth/invitations/accept', {
      body: { token, name: 'M', password: 'short' },
    });
    expect(weak).toMatchObject({
      status: 400,
      body: { success: false, message: expect.stringMatching(/^password: /) },
    });
    expect(
      (
        await call(base, 'POST', '/auth/invitations/accept', {
          body: { token, name: 'Max Member', password: PASSWORD },
        })
      ).status,
    ).toBe(201);
    const member = await signIn(base, email, PASSWORD);
    const m = session(base, member);

    for (const [method, path] of [
      ['GET', '/api/api-keys'],
      ['POST', '/api/api-keys'],
      ['GET', '/api/users'],
      ['POST', '/api/invitations'],
      ['GET', '/api/integrations'],
      ['PUT', '/api/integrations/stripe'],
      ['GET', '/api/integrations/events'],
    ] as const) {
      const res = await call(base, method, path, { headers: m, body: method === 'GET' ? undefined : {} });
      expect(res, `${method} ${path}`).toEqual(
        expect.objectContaining({
          status: 403,
          body: { success: false, message: 'Only an owner can manage API keys, integrations and the team' },
        }),
      );
    }
    expect(
      (await call(base, 'POST', '/api/programs', { headers: m, body: { name: 'by member', commission_value: 5 } }))
        .status,
    ).toBe(201);
    // Outbound webhook endpoints are not among the owner's (spec: everything but keys, integrations and users).
    expect((await call(base, 'GET', '/api/webhook-endpoints', { headers: m })).status).toBe(200);
    // better-auth's profile update cannot make a member an owner, nor move them to another organization
    const other = await ownerSession(base);
    const escalate = await call(base, 'POST', '/auth/update-user', {
      headers: { cookie: member },
      body: { role: 'owner', organizationId: other.organization.id, name: 'Max' },
    });
    expect(escalate.status).toBe(400);
    expect((await call(base, 'GET', '/api/api-keys', { headers: m })).status).toBe(403);
    expect((await call(base, 'GET', '/api/me', { headers: m })).body.data.organization.id).toBe(owner.organization.id);

    // roles: the last owner stays
    const users = (await call(base, 'GET', '/api/users', { headers })).body.data.users as {
      id: string;
      email: string;
    }[];
    const ownerId = users.find((u) => u.email === owner.email)!.id;
    const memberId = users.find((u) => u.email === email)!.id;
    expect(await call(base, 'PATCH', `/api/users/${ownerId}`, { headers, body: { role: 'member' } })).toMatchObject({
      status: 409,
      body: { message: 'The organization must keep at least one owner' },
    });
    expect(await call(base, 'PATCH', `/api/users/${memberId}`, { headers, body: { role: 'owner' } })).toMatchObject({
      status: 200,
      body: { data: { user: { role: 'owner' } } },
    });
    expect((await call(base, 'GET', '/api/api-keys', { headers: m })).status).toBe(200);
    // removing a user ends their sessions at once
    expect((await call(base, 'DELETE', `/api/users/${memberId}`, { headers })).status).toBe(200);
    expect((await call(base, 'GET', '/api/me', { headers: m })).status).toBe(401);
  });

  it('an invitation can be revoked, and then not accepted', async () => {
    const owner = await ownerSession(base);
    const headers = session(base, owner.cookie);
    const invited = await call(base, 'POST', '/api/invitations', {
      headers,
      body: { email: `r-${Date.now()}@example.com`, role: 'owner' },
    });
    const revoked = await call(base, 'DELETE', `/api/invitations/${invited.body.data.invitation.id}`, { headers });
    expect(revoked).toMatchObject({ status: 200, body: { data: { invitation: { status: 'revoked' } } } });
    const token = new URL(invited.body.data.accept_url).searchParams.get('token');
    expect(
      (await call(base, 'POST', '/auth/invitations/accept', { body: { token, name: 'R', password: PASSWORD } })).status,
    ).toBe(404);
    const list = await call(base, 'GET', '/api/invitations', { headers });
    expect(list.body.data.invitations[0]).toMatchObject({ status: 'revoked' });
  });
});

describe('API keys from the dashboard', () => {
  it('rotation: a new key is shown once; the old one, revoked, is refused at once', async () => {
    const owner = await ownerSession(base);
    const headers = session(base, owner.cookie);
    const created = await call(base, 'POST', '/api/api-keys', { headers });
    expect(created).toMatchObject({ status: 201, body: { data: { api_key: expect.stringMatching(/^svc-/) } } });
    const listed = await call(base, 'GET', '/api/api-keys', { headers });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.data.api_key);
    const old = listed.body.data.api_keys.find((k: { id: string }) => k.id !== created.body.data.api_key_info.id);
    expect((await call(base, 'GET', '/api/me', { headers: { authorization: owner.apiKey } })).status).toBe(200);
    expect((await call(base, 'DELETE', `/api/api-keys/${old.id}`, { headers })).status).toBe(200);
    expect((await call(base, 'GET', '/api/me', { headers: { authorization: owner.apiKey } })).status).toBe(401);
    expect((await call(base, 'GET', '/api/me', { headers: { authorization: created.body.data.api_key } })).status).toBe(
      200,
    );
  });

  it('the list pages on the server: every key once, oldest first; a bad cursor is a 400 naming it', async () => {
    const owner = await ownerSession(base);
    const headers = session(base, owner.cookie);
    for (let i = 0; i < 3; i++) expect((await call(base, 'POST', '/api/api-keys', { headers })).status).toBe(201);
    const all = (await call(base, 'GET', '/api/api-keys', { headers })).body.data;
    // Both modes' keys: the first live and test keys (made with the organization), then three live ones.
    expect(all.api_keys.map((k: { mode: string }) => k.mode)).toEqual(['live', 'test', 'live', 'live', 'live']);
    expect(all.next_cursor).toBeNull();
    const walked: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await call(base, 'GET', `/api/api-keys?limit=3${cursor ? `&cursor=${cursor}` : ''}`, {
        headers,
      });
      walked.push(...page.body.data.api_keys);
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(walked).toEqual(all.api_keys);
    expect(await call(base, 'GET', '/api/api-keys?cursor=nope', { headers })).toMatchObject({
      status: 400,
      body: { message: 'cursor: Invalid cursor' },
    });
  });
});

describe('password reset', () => {
  it('an e-mailed (logged) link sets a new password and ends every session', async () => {
    const lines: string[] = [];
    const logged = await startService({}, service.db, { write: (line: string) => void lines.push(line) });
    try {
      const owner = await ownerSession(logged.baseUrl);
      const requested = await call(logged.baseUrl, 'POST', '/auth/request-password-reset', {
        body: { email: owner.email },
      });
      expect(requested.status).toBe(200);
      const mail = lines
        .map((l) => JSON.parse(l))
        .find((l) => l.mail?.to === owner.email && /Reset/.test(l.mail.subject));
      const link = new URL(/(http\S+reset-password\S+)/.exec(mail.mail.text)![1]);
      expect(link.pathname).toBe('/dashboard/reset-password');
      const reset = await call(logged.baseUrl, 'POST', '/auth/reset-password', {
        body: { token: link.searchParams.get('token'), newPassword: 'a brand new passphrase' },
      });
      expect(reset.status).toBe(200);
      expect((await call(logged.baseUrl, 'GET', '/api/me', { headers: { cookie: owner.cookie } })).status).toBe(401);
      await expect(signIn(logged.baseUrl, owner.email, PASSWORD)).rejects.toThrow(/401/);
      expect(await signIn(logged.baseUrl, owner.email, 'a brand new passphrase')).toMatch(/^svc\.session_token=/);
      // the link works once
      const again = await call(logged.baseUrl, 'POST', '/auth/reset-password', {
        body: { token: link.searchParams.get('token'), newPassword: 'yet another passphrase' },
      });
      expect(again.status).toBe(400);
    } finally {
      await logged.close();
    }
  });
});

describe('sign-in by e-mailed link', () => {
  it('signs an existing user in once; an unknown address gets no account', async () => {
    const lines: string[] = [];
    const logged = await startService({}, service.db, { write: (line: string) => void lines.push(line) });
    try {
      const owner = await ownerSession(logged.baseUrl);
      const requested = await call(logged.baseUrl, 'POST', '/auth/sign-in/magic-link', {
        body: { email: owner.email, callbackURL: '/dashboard/overview' },
      });
      expect(requested.status).toBe(200);
      const mail = lines
        .map((l) => JSON.parse(l))
        .find((l) => l.mail?.to === owner.email && /sign-in link/.test(l.mail.subject));
      const link = /(http\S+)/.exec(mail.mail.text)![1];
      const verified = await fetch(link, { redirect: 'manual' });
      expect(verified.status).toBe(302);
      expect(verified.headers.get('location')).toMatch(/\/dashboard\/overview$/);
      const cookie = sessionCookieOf(verified.headers);
      const me = await call(logged.baseUrl, 'GET', '/api/me', { headers: { cookie } });
      expect(me.body.data.organization.id).toBe(owner.organization.id);
      const again = await fetch(link, { redirect: 'manual' });
      expect(again.headers.getSetCookie().some((c) => c.includes('session_token=') && !c.includes('Max-Age=0'))).toBe(
        false,
      );

      const stranger = `nobody-${Date.now()}@example.com`;
      expect(
        (
          await call(logged.baseUrl, 'POST', '/auth/sign-in/magic-link', {
            body: { email: stranger, callbackURL: '/dashboard/overview' },
          })
        ).status,
      ).toBe(200);
      const strangerMail = lines.map((l) => JSON.parse(l)).find((l) => l.mail?.to === stranger);
      if (strangerMail) {
        const res = await fetch(/(http\S+)/.exec(strangerMail.mail.text)![1], { redirect: 'manual' });
        expect(res.headers.getSetCookie().some((c) => c.includes('session_token=') && !c.includes('Max-Age=0'))).toBe(
          false,
        );
      }
      expect(
        (
          await service.db.orm.em
            .fork()
            .getConnection()
            .execute('select count(*)::int as n from users where email = ?', [stranger])
        )[0].n,
      ).toBe(0);
    } finally {
      await logged.close();
    }
  });
});

describe('sign-in rate limit', () => {
  it('a wrong password 10 times is slowed down: 429 with Retry-After past the limit, the right one too', async () => {
    const limited = await startService(
      { SIGN_IN_RATE_LIMIT_MAX: 5, SIGN_IN_RATE_LIMIT_WINDOW_SECONDS: 60 },
      service.db,
    );
    try {
      const owner = await ownerSession(base);
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`${limited.baseUrl}/auth/sign-in/email`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: limited.baseUrl },
          body: JSON.stringify({ email: owner.email, password: `wrong ${i}` }),
        });
        statuses.push(res.status);
        if (res.status === 429) retryAfter = res.headers.get('retry-after');
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
      expect(Number(retryAfter)).toBeGreaterThan(0);
      const right = await fetch(`${limited.baseUrl}/auth/sign-in/email`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: limited.baseUrl },
        body: JSON.stringify({ email: owner.email, password: PASSWORD }),
      });
      expect(right.status).toBe(429);
      expect(sessionCookieOf).toBeDefined();
    } finally {
      await limited.close();
    }
  });
});
