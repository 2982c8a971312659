import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract, isOwnerOnly, OWNER_ONLY_MESSAGE } from '@affiliate-attribution/contract';
import { assertDocumentedResponse } from '../support/openapi-validation.js';
import { call, ownerSession, PASSWORD, session, signIn, startService, type PeopleServer } from './support/people.js';
import { partnerCookie } from '../support/partner-session.js';
import { TEST_ENCRYPTION_KEY } from '../support/server.js';

/**
 * The roles' rule holds per route of the contract, whatever spelling of its path reaches the
 * service: a `member`'s session never gets a 2xx from a route the contract marks owner-only, and
 * never changes anything through one. The routes come from the contract itself, so a route marked
 * owner-only later is probed too (and needs its sample input below, or this test fails).
 */
function routesOf(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((value) => (isAppRoute(value) ? [value] : routesOf(value as AppRouter)));
}
const OWNER_ONLY_ROUTES = routesOf(contract).filter(isOwnerOnly);
const nameOf = (route: AppRoute) => `${route.method} ${route.path}`;

let service: PeopleServer;
let base: string;

beforeAll(async () => {
  // ENCRYPTION_KEY: a partner's tax form (an owner-only document) is stored only encrypted.
  service = await startService({ ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
  base = service.baseUrl;
}, 60_000);
afterAll(() => service?.close());

interface Team {
  owner: Awaited<ReturnType<typeof ownerSession>>;
  /** The member probing, and their user id (their own role is what they would like to change). */
  member: { cookie: string; id: string; email: string };
  /** Another member: the one a member would remove. */
  bystanderId: string;
  pendingInvitationId: string;
  apiKeyId: string;
  /** An affiliate whose partner submitted a tax form (its document, its acceptance and rejection are owner-only). */
  taxFormAffiliateId: string;
}

async function invitedMember(base: string, ownerCookie: string): Promise<{ cookie: string; id: string; email: string }> {
  const email = `member-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const invited = await call(base, 'POST', '/api/invitations', { headers: session(base, ownerCookie), body: { email } });
  expect(invited.status).toBe(201);
  const token = new URL(invited.body.data.accept_url).searchParams.get('token');
  const accepted = await call(base, 'POST', '/auth/invitations/accept', { body: { token, name: 'Max Member', password: PASSWORD } });
  expect(accepted.status).toBe(201);
  return { cookie: await signIn(base, email, PASSWORD), id: accepted.body.data.user.id as string, email };
}

async function team(): Promise<Team> {
  const owner = await ownerSession(base);
  const member = await invitedMember(base, owner.cookie);
  const bystander = await invitedMember(base, owner.cookie);
  const pending = await call(base, 'POST', '/api/invitations', { headers: session(base, owner.cookie), body: { email: `pending-${Date.now()}@example.com` } });
  const keys = await call(base, 'GET', '/api/api-keys', { headers: session(base, owner.cookie) });
  return { owner, member, bystanderId: bystander.id, pendingInvitationId: pending.body.data.invitation.id, apiKeyId: keys.body.data.api_keys[0].id, taxFormAffiliateId: await affiliateWithTaxForm(owner) };
}

/** An affiliate of the owner's organization whose partner uploaded a tax form in the portal. */
async function affiliateWithTaxForm(owner: Awaited<ReturnType<typeof ownerSession>>): Promise<string> {
  const key = { authorization: `Bearer ${owner.apiKey}` };
  const program = await call(base, 'POST', '/api/programs', { headers: key, body: { name: 'Taxed', commission_value: 10 } });
  const email = `taxed-${Math.random().toString(36).slice(2, 10)}@partners.example`;
  const affiliate = await call(base, 'POST', '/api/affiliates', { headers: key, body: { email, program_id: program.body.data.program.id } });
  const cookie = await partnerCookie(base, service.db.orm, owner.organization.id, email);
  const pdf = Buffer.from('%PDF-1.7\nW-9 with a taxpayer id\n%%EOF\n').toString('base64');
  const uploaded = await call(base, 'POST', '/partner/api/tax-form', { headers: { cookie, origin: base }, body: { kind: 'w9', file_name: 'w9.pdf', content_base64: pdf } });
  expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(201);
  return affiliate.body.data.affiliate.id;
}

/** Path parameters of an owner-only route: what a member would most like to reach with it. */
function pathOf(route: AppRoute, t: Team, as: 'member' | 'owner'): string {
  const values: Record<string, string> = {
    // A member changing their own role (to owner); the owner promotes, then removes, the bystander.
    [`PATCH /api/users/:id`]: as === 'member' ? t.member.id : t.bystanderId,
    [`DELETE /api/users/:id`]: t.bystanderId,
    [`DELETE /api/invitations/:id`]: t.pendingInvitationId,
    [`DELETE /api/api-keys/:id`]: t.apiKeyId,
    [`PUT /api/integrations/:provider`]: 'stripe',
    [`DELETE /api/integrations/:provider`]: 'stripe',
    [`GET /api/affiliates/:id/tax-form/document`]: t.taxFormAffiliateId,
    [`POST /api/affiliates/:id/tax-form/accept`]: t.taxFormAffiliateId,
    [`POST /api/affiliates/:id/tax-form/reject`]: t.taxFormAffiliateId,
  };
  if (!route.path.includes(':')) return route.path;
  const value = values[nameOf(route)];
  if (value === undefined) throw new Error(`${nameOf(route)}: give this owner-only route a sample path parameter in owner-only-routes.test.ts`);
  return route.path.replace(/:\w+/, value);
}

/** A valid body, so that nothing but the role check stands between the member and a 2xx. */
function bodyOf(route: AppRoute): unknown {
  const bodies: Record<string, unknown> = {
    'POST /api/invitations': { email: `escalate-${Math.random().toString(36).slice(2, 10)}@example.com`, role: 'owner' },
    'PATCH /api/users/:id': { role: 'owner' },
    'PUT /api/integrations/:provider': { signing_secret: 'whsec_the_attackers_own_secret' },
    'POST /api/affiliates/:id/tax-form/accept': {},
    'POST /api/affiliates/:id/tax-form/reject': { reason: 'Not signed' },
  };
  const schema = (route as { body?: unknown }).body;
  const takesBody = route.method !== 'GET' && typeof (schema as { safeParse?: unknown } | undefined)?.safeParse === 'function';
  if (!takesBody) return undefined;
  if (!(nameOf(route) in bodies)) throw new Error(`${nameOf(route)}: give this owner-only route a sample body in owner-only-routes.test.ts`);
  return bodies[nameOf(route)];
}

/** Other spellings of one path: each reaches the route on a lax router, or should not reach it at all. */
function spellings(path: string): string[] {
  const segments = path.split('/').slice(1); // ['api', 'users', '<id>']
  const [, resource] = segments;
  const rest = segments.slice(2).map((s) => `/${s}`).join('');
  const encode = (text: string, at: number) => `${text.slice(0, at)}%${text.charCodeAt(at).toString(16).toUpperCase()}${text.slice(at + 1)}`;
  const variants = [
    path.toUpperCase(),
    `/API/${resource}${rest}`,
    `/api/${resource!.toUpperCase()}${rest}`,
    `/api/${resource![0]!.toUpperCase()}${resource!.slice(1)}${rest}`,
    `${path}/`,
    `${path.toUpperCase()}/`,
    `/api/${encode(resource!, 0)}${rest}`,
    `/api/${encode(resource!, resource!.length - 1)}${rest}`,
    `/%61pi/${resource}${rest}`,
    `/api//${resource}${rest}`,
    `//api/${resource}${rest}`,
    `/api/${resource}/${rest}`,
    `/api/${resource}${rest}//`,
  ];
  // A parameter's own characters %-encoded: the same route, the same parameter once decoded.
  if (rest) variants.push(`/api/${resource}${encode(rest, rest.length - 1)}`);
  return [...new Set(variants)].filter((variant) => variant !== path);
}

describe('owner-only routes, from the contract', () => {
  it('are the team, invitations, API keys and integrations', () => {
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
      ]),
    );
    // Not the rest of the program (spec: a member does everything but keys, integrations and users).
    for (const open of ['POST /api/programs', 'GET /api/webhook-endpoints', 'POST /api/affiliates/:id/invitation', 'GET /api/me', 'GET /api/affiliates/:id/tax-form', 'POST /api/affiliates/:id/stripe-onboarding']) expect(OWNER_ONLY_ROUTES.map(nameOf)).not.toContain(open);
  });

  it("refuse a member's session under every spelling of their paths; the member's role and the organization's keys, team and secrets do not change; the owner still succeeds", async () => {
    const t = await team();
    const member = session(base, t.member.cookie);
    const before = await stateOf(t);
    expect(before.member).toBe('member');
    // Every answer that is not a refusal, so that a failure lists them all.
    const wrong: string[] = [];
    const answer = (method: string, path: string, res: { status: number; body: unknown }) => `${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`;
    for (const route of OWNER_ONLY_ROUTES) {
      const path = pathOf(route, t, 'member');
      const plain = await call(base, route.method, path, { headers: member, body: bodyOf(route) });
      if (plain.status !== 403 || plain.body?.message !== OWNER_ONLY_MESSAGE) wrong.push(answer(route.method, path, plain));
      // The 403 is declared in the route's OpenAPI operation.
      else assertDocumentedResponse(route.method, path, plain.status, JSON.stringify(plain.body), plain.headers.get('content-type'));
      for (const spelling of spellings(path)) {
        const res = await call(base, route.method, spelling, { headers: member, body: bodyOf(route) });
        if (![403, 404].includes(res.status)) wrong.push(answer(route.method, spelling, res));
      }
    }
    expect(wrong, 'answers to a member other than 403 (plain spelling) or 403/404 (other spellings)').toEqual([]);
    expect(await stateOf(t)).toEqual(before);
    expect((await call(base, 'GET', '/api/me', { headers: member })).status).toBe(200);

    // The organization's API key is the organization: it manages keys, as before.
    expect((await call(base, 'GET', '/api/api-keys', { headers: { authorization: `Bearer ${t.owner.apiKey}` } })).status).toBe(200);
    const owner = session(base, t.owner.cookie);
    for (const route of OWNER_ONLY_ROUTES) {
      const path = pathOf(route, t, 'owner');
      const res = await call(base, route.method, path, { headers: owner, body: bodyOf(route) });
      expect(res.status, `owner: ${route.method} ${path}: ${JSON.stringify(res.body)}`).toBeGreaterThanOrEqual(200);
      expect(res.status, `owner: ${route.method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    }
  }, 120_000);
});

/** What a member's success would have changed: roles, keys, invitations, provider secrets, a tax form's review. */
async function stateOf(t: Team) {
  const owner = session(base, t.owner.cookie);
  const [users, keys, invitations, integrations, taxForm] = await Promise.all(
    ['/api/users', '/api/api-keys', '/api/invitations', '/api/integrations', `/api/affiliates/${t.taxFormAffiliateId}/tax-form`].map((path) => call(base, 'GET', path, { headers: owner })),
  );
  return {
    users: users!.body.data.users.map((u: { id: string; role: string }) => `${u.id}:${u.role}`).sort(),
    member: users!.body.data.users.find((u: { id: string }) => u.id === t.member.id)?.role,
    keys: keys!.body.data.api_keys.map((k: { id: string; revoked_at: string | null }) => `${k.id}:${k.revoked_at}`),
    invitations: invitations!.body.data.invitations.map((i: { id: string; status: string; role: string }) => `${i.id}:${i.status}:${i.role}`),
    integrations: integrations!.body.data.integrations.map((i: { provider: string; configured: boolean }) => `${i.provider}:${i.configured}`),
    taxForm: taxForm!.body.data.tax_form,
  };
}
