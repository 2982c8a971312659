import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN_TOKEN } from '../support/server.js';
import { call, ownerSession, session } from './support/people.js';
import {
  fromPortal,
  type MailedService,
  partnerCookieOf,
  signInByMail,
  startServiceWithMail,
} from './support/portal.js';
import type { SmtpReceiver } from './support/smtp.js';

/**
 * The portal preview (spec/test-mode.md, "Dashboard and portal"): in test mode the merchant gets a
 * short-lived, single-use link that signs a browser in to the partner portal as one of its test
 * affiliates; live mode (a live key, a session without X-Mode: test) gets 403.
 */
let smtp: SmtpReceiver;
let service: MailedService;
let base: string;

beforeAll(async () => {
  service = await startServiceWithMail();
  ({ smtp, baseUrl: base } = service);
});
afterAll(() => service?.close());

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/** An organization with an owner's session, its live and test keys, and a live and a test affiliate. */
async function merchant() {
  const owner = await ownerSession(base);
  const live = { authorization: `Bearer ${owner.apiKey}` };
  const keys = await call(base, 'POST', `/admin/organizations/${owner.organization.id}/api-keys`, {
    headers: admin,
    body: { mode: 'test' },
  });
  expect(keys.status).toBe(201);
  const test = { authorization: `Bearer ${keys.body.data.api_key}` };
  const affiliate = async (key: Record<string, string>, name: string) => {
    const program = await call(base, 'POST', '/api/programs', {
      headers: key,
      body: { name: `${name}'s program`, commission_value: 20 },
    });
    expect(program.status).toBe(201);
    const slug = name.toLowerCase().replace(/\W+/g, '-');
    const created = await call(base, 'POST', '/api/affiliates', {
      headers: key,
      body: { email: `${slug}@partners.example`, name, program_id: program.body.data.program.id, slug },
    });
    expect(created.status).toBe(201);
    return created.body.data.affiliate as { id: string; email: string; livemode: boolean };
  };
  return {
    owner,
    live,
    test,
    liveAffiliate: await affiliate(live, 'Live Larry'),
    testAffiliate: await affiliate(test, 'Test Tina'),
  };
}

describe('POST /api/affiliates/{id}/portal-preview', () => {
  it('with a test key: a link that signs in once, as the test partner, to a portal that says it is test data', async () => {
    const m = await merchant();
    expect([m.testAffiliate.livemode, m.liveAffiliate.livemode]).toEqual([false, true]);
    const preview = await call(base, 'POST', `/api/affiliates/${m.testAffiliate.id}/portal-preview`, {
      headers: m.test,
      body: {},
    });
    expect(preview.status).toBe(201);
    const url = new URL(preview.body.data.url);
    expect(url.origin).toBe(base);
    const [, portal, organizationId, page] = url.pathname.split('/');
    expect([portal, page]).toEqual(['portal', 'preview']);
    expect(organizationId).not.toBe(m.owner.organization.id); // the test data's organization
    const minutes = (Date.parse(preview.body.data.expires_at) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(4);
    expect(minutes).toBeLessThanOrEqual(5);

    const token = url.searchParams.get('token');
    const signedIn = await call(base, 'POST', '/partner/api/sign-in', {
      headers: fromPortal(base),
      body: { organization_id: organizationId, token },
    });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.partner).toMatchObject({
      email: 'test-tina@partners.example',
      name: 'Test Tina',
      livemode: false,
    });
    expect(signedIn.body.data.partner.memberships.map((x: { affiliate_id: string }) => x.affiliate_id)).toEqual([
      m.testAffiliate.id,
    ]);
    const me = await call(base, 'GET', '/partner/api/me', { headers: { cookie: partnerCookieOf(signedIn.headers) } });
    expect(me.status).toBe(200);
    expect(me.body.data.partner.livemode).toBe(false);

    // Single use.
    const again = await call(base, 'POST', '/partner/api/sign-in', {
      headers: fromPortal(base),
      body: { organization_id: organizationId, token },
    });
    expect(again.status).toBe(401);
  });

  it('a dashboard session in test mode (X-Mode: test) gets the link; a live affiliate in live mode (a session without it, a live key): 403; a test id in live mode: 404', async () => {
    const m = await merchant();
    const dashboard = session(base, m.owner.cookie);
    const inTest = await call(base, 'POST', `/api/affiliates/${m.testAffiliate.id}/portal-preview`, {
      headers: { ...dashboard, 'x-mode': 'test' },
      body: {},
    });
    expect(inTest.status).toBe(201);
    expect(inTest.body.data.url).toMatch(/\/portal\/[0-9a-f-]{36}\/preview\?token=/);

    const refused = { status: 403, body: { success: false, message: 'preview is for test partners' } };
    const liveSession = await call(base, 'POST', `/api/affiliates/${m.liveAffiliate.id}/portal-preview`, {
      headers: dashboard,
      body: {},
    });
    expect({ status: liveSession.status, body: liveSession.body }).toEqual(refused);
    const liveKey = await call(base, 'POST', `/api/affiliates/${m.liveAffiliate.id}/portal-preview`, {
      headers: m.live,
      body: {},
    });
    expect({ status: liveKey.status, body: liveKey.body }).toEqual(refused);
    // A test affiliate's id in live mode is not found (404), as every test id under a live key.
    const liveKeyTestId = await call(base, 'POST', `/api/affiliates/${m.testAffiliate.id}/portal-preview`, {
      headers: m.live,
      body: {},
    });
    expect(liveKeyTestId.status).toBe(404);
    const liveSessionTestId = await call(base, 'POST', `/api/affiliates/${m.testAffiliate.id}/portal-preview`, {
      headers: dashboard,
      body: {},
    });
    expect(liveSessionTestId.status).toBe(404);
  });

  it('a live affiliate named in test mode is not found (404), as any live id under a test key', async () => {
    const m = await merchant();
    const res = await call(base, 'POST', `/api/affiliates/${m.liveAffiliate.id}/portal-preview`, {
      headers: m.test,
      body: {},
    });
    expect(res.status).toBe(404);
    expect(res.body.success).toBe(false);
  });

  it('a live partner, signed in by their e-mailed link, is livemode: true (no preview banner)', async () => {
    const m = await merchant();
    expect(
      (await call(base, 'POST', `/api/affiliates/${m.liveAffiliate.id}/invitation`, { headers: m.live, body: {} }))
        .status,
    ).toBe(202);
    const cookie = await signInByMail(base, smtp, m.liveAffiliate.email);
    const me = await call(base, 'GET', '/partner/api/me', { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.body.data.partner).toMatchObject({ name: 'Live Larry', livemode: true });
  });
});
