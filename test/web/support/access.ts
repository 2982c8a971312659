import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { afterAll, beforeAll, expect } from 'vitest';
import { accessOf, contract } from '@affiliate-attribution/contract';
import { partnerCookie } from '../../support/partner-session.js';
import { PayPalStandIn } from '../../support/rails/paypal-standin.js';
import { TEST_ADMIN_TOKEN, TEST_ENCRYPTION_KEY } from '../../support/server.js';
import { call, ownerSession, PASSWORD, session, signIn, startService, type PeopleServer } from './people.js';

/*
 * What the tests of the access rule (contract/src/common/access.ts) share: the routes that have
 * one, taken from the contract itself (a route given a rule later is probed too, and needs its
 * sample input here, or the tests fail); an organization whose owner, member, keys, tax form,
 * payouts and import a refused credential would most like to reach; what a refused call must not
 * change.
 */

function routesOf(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((value) => (isAppRoute(value) ? [value] : routesOf(value)));
}
/** Every route of the contract with an access rule, in the contract's order. */
/**
 * The access tests' service, started once for the file (beforeAll) with PayPal's stand-in behind
 * PAYPAL_API_BASE_URL, and stopped after (afterAll), the setting restored. ENCRYPTION_KEY: a
 * partner's tax form (an owner-only document) and rail credentials are stored only encrypted.
 */
export function accessService(): { paypal: PayPalStandIn; service: PeopleServer; base: string } {
  const paypal = new PayPalStandIn();
  const previousPayPal = process.env.PAYPAL_API_BASE_URL;
  const started = { paypal } as { paypal: PayPalStandIn; service: PeopleServer; base: string };
  beforeAll(async () => {
    await paypal.start();
    process.env.PAYPAL_API_BASE_URL = paypal.baseUrl;
    started.service = await startService({ ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
    started.base = started.service.baseUrl;
  }, 60_000);
  afterAll(async () => {
    await started.service?.close();
    if (previousPayPal === undefined) delete process.env.PAYPAL_API_BASE_URL;
    else process.env.PAYPAL_API_BASE_URL = previousPayPal;
    await paypal.stop();
  });
  return started;
}

export const RESTRICTED_ROUTES = routesOf(contract).filter((route) => accessOf(route) !== undefined);
export const nameOf = (route: AppRoute) => `${route.method} ${route.path}`;

export interface Team {
  owner: Awaited<ReturnType<typeof ownerSession>>;
  /** The organization's test key (`svc_test_…`). */
  testKey: string;
  /** The member probing, and their user id (their own role is what they would like to change). */
  member: { cookie: string; id: string; email: string };
  /** Another member: the one a member would remove. */
  bystanderId: string;
  pendingInvitationId: string;
  /** The organization's live API key (the one created with it). */
  apiKeyId: string;
  /** An affiliate whose partner submitted a tax form (its document, its acceptance and rejection are owner-only). */
  taxFormAffiliateId: string;
  programId: string;
  /** A live payout paid through PayPal (the stand-in): pending (to send) and failed (to retry). */
  payouts: { pending: string; failed: string };
  /** A finished live import (CSV), nothing built on it: it can be undone. */
  importId: string;
}

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

export async function invitedMember(
  base: string,
  ownerCookie: string,
): Promise<{ cookie: string; id: string; email: string }> {
  const email = `${unique('member')}@example.com`;
  const invited = await call(base, 'POST', '/api/invitations', {
    headers: session(base, ownerCookie),
    body: { email },
  });
  expect(invited.status).toBe(201);
  const token = new URL(invited.body.data.accept_url).searchParams.get('token');
  const accepted = await call(base, 'POST', '/auth/invitations/accept', {
    body: { token, name: 'Max Member', password: PASSWORD },
  });
  expect(accepted.status).toBe(201);
  return { cookie: await signIn(base, email, PASSWORD), id: accepted.body.data.user.id as string, email };
}

/** Calls with the organization's live key, expecting `status`. */
async function live(base: string, apiKey: string, method: string, path: string, body: unknown, status: number) {
  const res = await call(base, method, path, { headers: { authorization: `Bearer ${apiKey}` }, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body.data;
}

/** A new organization with its owner, two members, a pending invitation, a tax form, payouts to send and retry, an import to undo. */
export async function team(service: PeopleServer, paypal: PayPalStandIn): Promise<Team> {
  const base = service.baseUrl;
  const owner = await ownerSession(base);
  const member = await invitedMember(base, owner.cookie);
  const bystander = await invitedMember(base, owner.cookie);
  const pending = await call(base, 'POST', '/api/invitations', {
    headers: session(base, owner.cookie),
    body: { email: `${unique('pending')}@example.com` },
  });
  const keys = await call(base, 'GET', '/api/api-keys', { headers: session(base, owner.cookie) });
  const liveKey = keys.body.data.api_keys.find((k: { mode: string }) => k.mode === 'live');
  const program = await live(
    base,
    owner.apiKey,
    'POST',
    '/api/programs',
    { name: 'Paid', commission_value: 10, currency: 'USD' },
    201,
  );
  return {
    owner,
    testKey: await testKeyOf(base, owner.organization.id),
    member,
    bystanderId: bystander.id,
    pendingInvitationId: pending.body.data.invitation.id,
    apiKeyId: liveKey.id,
    taxFormAffiliateId: await affiliateWithTaxForm(service, owner, program.program.id),
    programId: program.program.id,
    payouts: await payoutsToSpend(base, owner.apiKey, owner.organization.id, program.program.id, paypal),
    importId: await finishedImport(base, owner.apiKey, program.program.id),
  };
}

/** A test key the operator issues (the organization's sign-up one is not shown to its owner). */
async function testKeyOf(base: string, organizationId: string): Promise<string> {
  const issued = await call(base, 'POST', `/admin/organizations/${organizationId}/api-keys`, {
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    body: { mode: 'test' },
  });
  expect(issued.status, JSON.stringify(issued.body)).toBe(201);
  return issued.body.data.api_key;
}

/** An affiliate of the owner's organization whose partner uploaded a tax form in the portal. */
async function affiliateWithTaxForm(service: PeopleServer, owner: Team['owner'], programId: string): Promise<string> {
  const base = service.baseUrl;
  const email = `${unique('taxed')}@partners.example`;
  const affiliate = await live(base, owner.apiKey, 'POST', '/api/affiliates', { email, program_id: programId }, 201);
  const cookie = await partnerCookie(base, service.db.orm, owner.organization.id, email);
  const pdf = Buffer.from('%PDF-1.7\nW-9 with a taxpayer id\n%%EOF\n').toString('base64');
  const uploaded = await call(base, 'POST', '/partner/api/tax-form', {
    headers: { cookie, origin: base },
    body: { kind: 'w9', file_name: 'w9.pdf', content_base64: pdf },
  });
  expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(201);
  return affiliate.affiliate.id;
}

/** A PayPal partner with approved commissions gathered into a pending payout. */
async function pendingPayPalPayout(base: string, apiKey: string, programId: string, amount: number): Promise<string> {
  const affiliate = (
    await live(
      base,
      apiKey,
      'POST',
      '/api/affiliates',
      { email: `${unique('paid')}@partners.example`, program_id: programId, name: 'Pat Partner' },
      201,
    )
  ).affiliate;
  await live(
    base,
    apiKey,
    'PATCH',
    `/api/affiliates/${affiliate.id}`,
    { payout_method: 'paypal', payout_email: `${unique('paypal')}@partners.example` },
    200,
  );
  await live(
    base,
    apiKey,
    'POST',
    '/api/commissions',
    { affiliate_id: affiliate.id, amount, description: 'earned' },
    201,
  );
  const created = await live(base, apiKey, 'POST', '/api/payouts', { program_id: programId }, 201);
  const payout = created.payouts.find((p: { affiliate_id: string }) => p.affiliate_id === affiliate.id);
  expect(payout?.status).toBe('pending');
  return payout.id;
}

/** One pending live payout, and one that PayPal (the stand-in) returned: failed, its commissions approved again. */
export async function payoutsToSpend(
  base: string,
  apiKey: string,
  organizationId: string,
  programId: string,
  paypal: PayPalStandIn,
): Promise<Team['payouts']> {
  await live(
    base,
    apiKey,
    'PUT',
    '/api/integrations/paypal_payouts',
    {
      client_id: paypal.clientId,
      client_secret: paypal.clientSecret,
      environment: 'sandbox',
      webhook_id: paypal.webhookId,
    },
    200,
  );
  const failed = await pendingPayPalPayout(base, apiKey, programId, 10);
  await live(base, apiKey, 'POST', '/api/payouts/send', { payout_ids: [failed] }, 202);
  for (let i = 0; i < 100 && !paypal.item(failed); i++) await new Promise((r) => setTimeout(r, 50));
  // Gathered while the first one is processing: the failed payout's commissions stay free to retry.
  const pending = await pendingPayPalPayout(base, apiKey, programId, 20);
  paypal.setItem(failed, 'RETURNED', { name: 'RECEIVER_UNREGISTERED', message: 'Receiver is unregistered' });
  const hook = paypal.webhookFor(failed, 'RETURNED');
  const received = await fetch(`${base}/webhooks/paypal/${organizationId}`, {
    method: 'POST',
    headers: hook.headers,
    body: hook.body,
  });
  expect(received.status, await received.text()).toBe(200);
  expect((await live(base, apiKey, 'GET', `/api/payouts/${failed}`, undefined, 200)).payout.status).toBe('failed');
  return { pending, failed };
}

export const affiliatesCsv = (who: string) =>
  `id,email,first_name,last_name,status,payout_email,tokens\n${who},${who}@imported.example,Imp,Orted,active,,\n`;

/** A live CSV import, finished. */
async function finishedImport(base: string, apiKey: string, programId: string): Promise<string> {
  const started = await live(
    base,
    apiKey,
    'POST',
    '/api/imports',
    {
      source: 'csv',
      credentials: { affiliates_csv: affiliatesCsv(unique('imp')) },
      program_id: programId,
      dry_run: false,
    },
    202,
  );
  return (await importSettled(base, apiKey, started.import.id)).id;
}

export async function importSettled(base: string, apiKey: string, id: string): Promise<{ id: string; status: string }> {
  for (let i = 0; i < 200; i++) {
    const found = (await live(base, apiKey, 'GET', `/api/imports/${id}`, undefined, 200)).import;
    if (found.status !== 'running') {
      expect(found.status, JSON.stringify(found)).toBe('succeeded');
      return found;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`import ${id} still running`);
}

/** Path parameters of a restricted route: what a refused credential would most like to reach with it. */
export function pathOf(route: AppRoute, t: Team, as: 'refused' | 'owner'): string {
  const values: Record<string, string> = {
    // A member changing their own role (to owner); the owner promotes, then removes, the bystander.
    [`PATCH /api/users/:id`]: as === 'refused' ? t.member.id : t.bystanderId,
    [`DELETE /api/users/:id`]: t.bystanderId,
    [`DELETE /api/invitations/:id`]: t.pendingInvitationId,
    [`DELETE /api/api-keys/:id`]: t.apiKeyId,
    [`PUT /api/integrations/:provider`]: 'stripe',
    [`DELETE /api/integrations/:provider`]: 'stripe',
    [`GET /api/affiliates/:id/tax-form/document`]: t.taxFormAffiliateId,
    [`POST /api/affiliates/:id/tax-form/accept`]: t.taxFormAffiliateId,
    [`POST /api/affiliates/:id/tax-form/reject`]: t.taxFormAffiliateId,
    [`POST /api/payouts/:id/retry`]: t.payouts.failed,
    [`GET /api/imports/:id`]: t.importId,
    [`DELETE /api/imports/:id`]: t.importId,
    [`POST /api/imports/:id/cancel`]: t.importId,
  };
  if (!route.path.includes(':')) return route.path;
  const value = values[nameOf(route)];
  if (value === undefined)
    throw new Error(
      `${nameOf(route)}: give this restricted route a sample path parameter in test/web/support/access.ts`,
    );
  return route.path.replace(/:\w+/, value);
}

/** A valid body, so that nothing but the access rule stands between the caller and a 2xx. */
export function bodyOf(route: AppRoute, t: Team): unknown {
  const bodies: Record<string, unknown> = {
    'POST /api/invitations': { email: `${unique('escalate')}@example.com`, role: 'owner' },
    'PATCH /api/users/:id': { role: 'owner' },
    'PUT /api/integrations/:provider': { signing_secret: 'whsec_the_attackers_own_secret' },
    'POST /api/affiliates/:id/tax-form/accept': {},
    'POST /api/affiliates/:id/tax-form/reject': { reason: 'Not signed' },
    'POST /api/payouts/send': { payout_ids: [t.payouts.pending] },
    'POST /api/payouts/:id/retry': {},
    'POST /api/imports': {
      source: 'csv',
      credentials: { affiliates_csv: affiliatesCsv(unique('sneaked')) },
      program_id: t.programId,
      dry_run: false,
    },
  };
  const schema = (route as { body?: unknown }).body;
  const takesBody =
    route.method !== 'GET' && typeof (schema as { safeParse?: unknown } | undefined)?.safeParse === 'function';
  if (!takesBody) return undefined;
  if (!(nameOf(route) in bodies))
    throw new Error(`${nameOf(route)}: give this restricted route a sample body in test/web/support/access.ts`);
  return bodies[nameOf(route)];
}

/** Other spellings of one path: each reaches the route on a lax router, or should not reach it at all. */
export function spellings(path: string): string[] {
  const segments = path.split('/').slice(1); // ['api', 'users', '<id>']
  const [, resource] = segments;
  const rest = segments
    .slice(2)
    .map((s) => `/${s}`)
    .join('');
  const encode = (text: string, at: number) =>
    `${text.slice(0, at)}%${text.charCodeAt(at).toString(16).toUpperCase()}${text.slice(at + 1)}`;
  const variants = [
    path.toUpperCase(),
    `/API/${resource}${rest}`,
    `/api/${resource.toUpperCase()}${rest}`,
    `/api/${resource[0].toUpperCase()}${resource.slice(1)}${rest}`,
    `${path}/`,
    `${path.toUpperCase()}/`,
    `/api/${encode(resource, 0)}${rest}`,
    `/api/${encode(resource, resource.length - 1)}${rest}`,
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

/**
 * What a refused call would have changed, as the owner sees the live account: roles, keys,
 * invitations, provider secrets, a tax form's review, the payouts and what reached PayPal, the
 * imports and the affiliates they brought.
 */
export async function stateOf(base: string, t: Team, paypal: PayPalStandIn) {
  const owner = session(base, t.owner.cookie);
  const paths = [
    '/api/users',
    '/api/api-keys',
    '/api/invitations',
    '/api/integrations',
    `/api/affiliates/${t.taxFormAffiliateId}/tax-form`,
    '/api/payouts?limit=100',
    '/api/imports',
    '/api/affiliates?limit=100',
  ];
  const [users, keys, invitations, integrations, taxForm, payouts, imports, affiliates] = await Promise.all(
    paths.map((path) => call(base, 'GET', path, { headers: owner })),
  );
  for (const [i, res] of [users, keys, invitations, integrations, taxForm, payouts, imports, affiliates].entries())
    expect(res.status, `${paths[i]}: ${JSON.stringify(res.body)}`).toBe(200);
  return {
    users: users.body.data.users.map((u: { id: string; role: string }) => `${u.id}:${u.role}`).sort(),
    member: users.body.data.users.find((u: { id: string }) => u.id === t.member.id)?.role,
    keys: keys.body.data.api_keys.map(
      (k: { id: string; mode: string; revoked_at: string | null }) => `${k.id}:${k.mode}:${k.revoked_at}`,
    ),
    invitations: invitations.body.data.invitations.map(
      (i: { id: string; status: string; role: string }) => `${i.id}:${i.status}:${i.role}`,
    ),
    integrations: integrations.body.data.integrations.map(
      (i: { provider: string; configured: boolean; updated_at: string | null }) =>
        `${i.provider}:${i.configured}:${i.updated_at}`,
    ),
    taxForm: taxForm.body.data.tax_form,
    payouts: payouts.body.data.payouts
      .map(
        (p: { id: string; status: string; retried_by_payout_id: string | null }) =>
          `${p.id}:${p.status}:${p.retried_by_payout_id}`,
      )
      .sort(),
    paypalBatches: paypal.createRequests.length,
    imports: imports.body.data.imports.map((i: { id: string; status: string }) => `${i.id}:${i.status}`),
    affiliates: affiliates.body.data.affiliates.map((a: { id: string }) => a.id).sort(),
  };
}
