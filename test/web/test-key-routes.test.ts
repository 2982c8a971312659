import { beforeAll, describe, expect, it } from 'vitest';
import { accessOf, refusesTestKey, TEST_KEY_REFUSED_MESSAGE } from '@affiliate-attribution/contract';
import { assertDocumentedResponse } from '../support/openapi-validation.js';
import {
  accessService,
  bodyOf,
  nameOf,
  pathOf,
  RESTRICTED_ROUTES,
  spellings,
  stateOf,
  team,
  type Team,
} from './support/access.js';
import { call, session, type PeopleServer } from './support/people.js';

/**
 * A test key (`svc_test_…`) works on test data only (shared/spec/test-mode.md). The account's
 * people and API keys have no test twin: a test key handed to a developer, or left in a staging
 * config, must not invite an owner, revoke the live keys or change a role. Every route with an
 * access rule, from the contract, is called with a test key aimed at the live account's rows: a
 * route the contract closes to test keys answers 403 with its message under every spelling; the
 * others (integrations, tax forms, payouts, imports, which test mode has of its own) act on test
 * data only and show none of the live rows. The live account is the same after as before.
 */
// Payouts are sent through PayPal: its stand-in counts what reached it.
const started = accessService();
const { paypal } = started;
let service: PeopleServer;
let base: string;
beforeAll(() => {
  ({ service, base } = started);
});

const testKey = (t: Team) => ({ authorization: `Bearer ${t.testKey}` });
const refused = { success: false, message: TEST_KEY_REFUSED_MESSAGE };

describe('a test key on the routes with an access rule, from the contract', () => {
  it('is refused the team, invitations and API keys, and nothing else of them', () => {
    expect(RESTRICTED_ROUTES.filter(refusesTestKey).map(nameOf)).toEqual([
      'GET /api/users',
      'PATCH /api/users/:id',
      'DELETE /api/users/:id',
      'GET /api/invitations',
      'POST /api/invitations',
      'DELETE /api/invitations/:id',
      'GET /api/api-keys',
      'POST /api/api-keys',
      'DELETE /api/api-keys/:id',
    ]);
  });

  it('answers 403 with its message where the contract closes a route to test keys, reaches no live row elsewhere, and changes nothing of the live account', async () => {
    const t = await team(service, paypal);
    const before = await stateOf(base, t, paypal);
    const liveIds = [
      t.member.id,
      t.bystanderId,
      t.pendingInvitationId,
      t.apiKeyId,
      t.taxFormAffiliateId,
      t.programId,
      t.payouts.pending,
      t.payouts.failed,
      t.importId,
    ];
    const wrong: string[] = [];
    const answer = (method: string, path: string, res: { status: number; body: unknown }) =>
      `${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
    for (const route of RESTRICTED_ROUTES) {
      const path = pathOf(route, t, 'refused');
      const res = await call(base, route.method, path, { headers: testKey(t), body: bodyOf(route, t) });
      if (refusesTestKey(route)) {
        if (
          res.status !== 403 ||
          JSON.stringify(res.body) !== JSON.stringify({ success: false, message: accessOf(route)!.noTestKey })
        )
          wrong.push(answer(route.method, path, res));
        // The 403 is declared in the route's OpenAPI operation.
        else
          assertDocumentedResponse(
            route.method,
            path,
            res.status,
            JSON.stringify(res.body),
            res.headers.get('content-type'),
          );
        for (const spelling of spellings(path)) {
          const other = await call(base, route.method, spelling, { headers: testKey(t), body: bodyOf(route, t) });
          if (![403, 404].includes(other.status)) wrong.push(answer(route.method, spelling, other));
        }
      } else {
        // Test data only: a live id (in the path or the body) is not found, a live row is never shown.
        const text = JSON.stringify(res.body);
        const sent = path + JSON.stringify(bodyOf(route, t) ?? {});
        const aimsAtLiveRow = liveIds.some((id) => sent.includes(id));
        // (A 404 may name the id the request itself sent.)
        if (
          (aimsAtLiveRow ? res.status !== 404 : res.status >= 300) ||
          liveIds.some((id) => text.includes(id) && !sent.includes(id))
        )
          wrong.push(answer(route.method, path, res));
      }
    }
    expect(
      wrong,
      'answers to a test key that are not a refusal (closed routes) or that reach live rows (the others)',
    ).toEqual([]);
    expect(await stateOf(base, t, paypal)).toEqual(before);
    // The test key itself still works on test data.
    expect((await call(base, 'GET', '/api/me', { headers: testKey(t) })).body.data.organization.livemode).toBe(false);
  }, 180_000);

  it("cannot invite an owner, revoke a live key or make a member an owner; the live key and an owner's session, in either mode, still can", async () => {
    const t = await team(service, paypal);
    const before = await stateOf(base, t, paypal);
    const email = 'new-owner@attacker.example';
    const invited = await call(base, 'POST', '/api/invitations', {
      headers: testKey(t),
      body: { email, role: 'owner' },
    });
    expect([invited.status, invited.body]).toEqual([403, refused]);
    const revoked = await call(base, 'DELETE', `/api/api-keys/${t.apiKeyId}`, { headers: testKey(t) });
    expect([revoked.status, revoked.body]).toEqual([403, refused]);
    const promoted = await call(base, 'PATCH', `/api/users/${t.member.id}`, {
      headers: testKey(t),
      body: { role: 'owner' },
    });
    expect([promoted.status, promoted.body]).toEqual([403, refused]);
    const minted = await call(base, 'POST', '/api/api-keys', { headers: testKey(t) });
    expect([minted.status, minted.body]).toEqual([403, refused]);
    // The same with X-Mode: test, as the dashboard's switch sends it: the key decides, not the header.
    const withHeader = await call(base, 'POST', '/api/invitations', {
      headers: { ...testKey(t), 'x-mode': 'test' },
      body: { email, role: 'owner' },
    });
    expect([withHeader.status, withHeader.body]).toEqual([403, refused]);

    // The live account is as it was: no invitation, the live key answers, the member is a member.
    const after = await stateOf(base, t, paypal);
    expect(after).toEqual(before);
    expect(after.member).toBe('member');
    expect(after.invitations.filter((i: string) => i.endsWith(':pending:owner'))).toEqual([]);
    expect(
      (await call(base, 'GET', '/api/me', { headers: { authorization: `Bearer ${t.owner.apiKey}` } })).status,
    ).toBe(200);

    // The live key is the organization; an owner's session manages keys in test mode too (the dashboard's switch).
    const live = { authorization: `Bearer ${t.owner.apiKey}` };
    expect(
      (
        await call(base, 'POST', '/api/invitations', {
          headers: live,
          body: { email: 'teammate@example.com', role: 'member' },
        })
      ).status,
    ).toBe(201);
    const issued = await call(base, 'POST', '/api/api-keys', {
      headers: { ...session(base, t.owner.cookie), 'x-mode': 'test' },
    });
    expect([issued.status, issued.body.data?.api_key_info?.mode]).toEqual([201, 'test']);
    const promotedByOwner = await call(base, 'PATCH', `/api/users/${t.member.id}`, {
      headers: { ...session(base, t.owner.cookie), 'x-mode': 'test' },
      body: { role: 'owner' },
    });
    expect([promotedByOwner.status, promotedByOwner.body.data?.user?.role]).toEqual([200, 'owner']);
  }, 120_000);
});
