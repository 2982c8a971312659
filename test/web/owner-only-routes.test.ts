import { beforeAll, describe, expect, it } from 'vitest';
import { accessOf, isOwnerOnly } from '@affiliate-attribution/contract';
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
} from './support/access.js';
import { call, session, type PeopleServer } from './support/people.js';

/**
 * The roles' rule holds per route of the contract, whatever spelling of its path reaches the
 * service: a `member`'s session never gets a 2xx from a route the contract marks owner-only, and
 * never changes anything through one. The routes come from the contract itself, so a route marked
 * owner-only later is probed too (and needs its sample input in test/web/support/access.ts, or
 * this test fails).
 */
const OWNER_ONLY_ROUTES = RESTRICTED_ROUTES.filter(isOwnerOnly);

// Payouts are sent through PayPal: its stand-in counts what reached it.
const started = accessService();
const { paypal } = started;
let service: PeopleServer;
let base: string;
beforeAll(() => {
  ({ service, base } = started);
});

describe('owner-only routes, from the contract', () => {
  it('are the team, invitations, API keys, integrations, tax form review, sending payouts and imports', () => {
    expect(OWNER_ONLY_ROUTES.map(nameOf)).toEqual(
      expect.arrayContaining([
        'GET /api/users',
        'PATCH /api/users/:id',
        'DELETE /api/users/:id',
        'GET /api/invitations',
        'POST /api/invitations',
        'DELETE /api/invitations/:id',
        'GET /api/api-keys',
        'POST /api/api-keys',
        'DELETE /api/api-keys/:id',
        'GET /api/integrations',
        'GET /api/integrations/events',
        'PUT /api/integrations/:provider',
        'DELETE /api/integrations/:provider',
        // A tax form carries a taxpayer id: only an owner reads it and decides on it.
        'GET /api/affiliates/:id/tax-form/document',
        'POST /api/affiliates/:id/tax-form/accept',
        'POST /api/affiliates/:id/tax-form/reject',
        // Spending the merchant's money through the rail an owner connected.
        'POST /api/payouts/send',
        'POST /api/payouts/:id/retry',
        // Imports (the dashboard's Imports page is an owner's).
        'POST /api/imports',
        'GET /api/imports',
        'GET /api/imports/:id',
        'DELETE /api/imports/:id',
        'POST /api/imports/:id/cancel',
      ]),
    );
    // Not the rest of the program (spec: a member does everything but keys, integrations and users).
    // Payouts that move no money (created, exported, marked paid, canceled) stay a member's too.
    const open = [
      'POST /api/programs',
      'GET /api/webhook-endpoints',
      'POST /api/affiliates/:id/invitation',
      'GET /api/me',
      'GET /api/affiliates/:id/tax-form',
      'POST /api/affiliates/:id/stripe-onboarding',
    ];
    for (const route of [
      ...open,
      'POST /api/payouts',
      'GET /api/payouts',
      'GET /api/payouts/export',
      'POST /api/payouts/:id/paid',
      'POST /api/payouts/:id/cancel',
    ])
      expect(OWNER_ONLY_ROUTES.map(nameOf)).not.toContain(route);
  });

  it("refuse a member's session under every spelling of their paths; the member's role and the organization's keys, team, secrets, payouts and imports do not change; the owner still succeeds", async () => {
    const t = await team(service, paypal);
    const member = session(base, t.member.cookie);
    const before = await stateOf(base, t, paypal);
    expect(before.member).toBe('member');
    // Every answer that is not a refusal, so that a failure lists them all.
    const wrong: string[] = [];
    const answer = (method: string, path: string, res: { status: number; body: unknown }) =>
      `${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`;
    for (const route of OWNER_ONLY_ROUTES) {
      const path = pathOf(route, t, 'refused');
      const plain = await call(base, route.method, path, { headers: member, body: bodyOf(route, t) });
      // The route's own message, from the contract (e.g. "Only an owner can send payouts").
      if (plain.status !== 403 || plain.body?.message !== accessOf(route)!.ownerOnly)
        wrong.push(answer(route.method, path, plain));
      // The 403 is declared in the route's OpenAPI operation.
      else
        assertDocumentedResponse(
          route.method,
          path,
          plain.status,
          JSON.stringify(plain.body),
          plain.headers.get('content-type'),
        );
      for (const spelling of spellings(path)) {
        const res = await call(base, route.method, spelling, { headers: member, body: bodyOf(route, t) });
        if (![403, 404].includes(res.status)) wrong.push(answer(route.method, spelling, res));
      }
    }
    expect(wrong, 'answers to a member other than 403 (plain spelling) or 403/404 (other spellings)').toEqual([]);
    expect(await stateOf(base, t, paypal)).toEqual(before);
    expect((await call(base, 'GET', '/api/me', { headers: member })).status).toBe(200);

    // The organization's API key is the organization: it manages keys, as before.
    expect(
      (await call(base, 'GET', '/api/api-keys', { headers: { authorization: `Bearer ${t.owner.apiKey}` } })).status,
    ).toBe(200);
    const owner = session(base, t.owner.cookie);
    for (const route of OWNER_ONLY_ROUTES) {
      const path = pathOf(route, t, 'owner');
      const res = await call(base, route.method, path, { headers: owner, body: bodyOf(route, t) });
      if (nameOf(route) === 'POST /api/imports/:id/cancel') {
        // The sample import was undone by the DELETE just before: past the access rule, the owner
        // meets the route's own answer for an import that was undone (never the member's 403).
        expect(res.status, `owner: ${route.method} ${path}: ${JSON.stringify(res.body)}`).toBe(409);
        expect(res.body?.message).toBe('The import was undone: only a running import can be cancelled');
        continue;
      }
      expect(res.status, `owner: ${route.method} ${path}: ${JSON.stringify(res.body)}`).toBeGreaterThanOrEqual(200);
      expect(res.status, `owner: ${route.method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    }
  }, 180_000);
});
