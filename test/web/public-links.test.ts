import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { TEST_ADMIN_TOKEN } from '../support/server.js';
import {
  describeWithPostgres,
  startService as startProcess,
  stopService,
  ADMIN_TOKEN as PROCESS_ADMIN_TOKEN,
  type ServiceProcess,
} from '../reliability/support/service.js';
import { call, PASSWORD, sessionCookieOf } from './support/people.js';
import {
  affiliateIdOf,
  type MailedService,
  merchantWithProgram,
  startServiceWithMail,
  unique,
} from './support/portal.js';
import type { ReceivedMail, SmtpReceiver } from './support/smtp.js';

/**
 * Every link the service hands out (e-mailed or answered) starts with PUBLIC_BASE_URL, whatever
 * the request's Host and X-Forwarded-Proto say: whoever asks for a victim's password reset, sign-in
 * link or invitation cannot point it at their own site.
 */
const PUBLIC_BASE_URL = 'https://affiliates.example.com';
const EVIL = {
  host: 'evil.example',
  'x-forwarded-proto': 'gopher',
  'x-forwarded-host': 'evil.example',
  origin: 'http://evil.example',
};

/** node:http, so that the Host header is the attacker's (fetch sets its own). */
function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: any; headers: IncomingHttpHeaders }> {
  const url = new URL(base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          ...headers,
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode!, body: parsed, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Every URL in a text (any scheme), so that a link to another host cannot hide. */
const linksIn = (text: string): string[] => text.match(/[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi) ?? [];

/**
 * The one other link an e-mail may carry: a partner's referral link, on the website the merchant
 * set for the program (configuration too, never a request header).
 */
const PROGRAM_WEBSITE = 'https://shop.example.com/';
const isReferralLink = (link: string): boolean => link.startsWith(`${PROGRAM_WEBSITE}?ref=`);

function expectOnlyLinksTo(base: string, text: string, what: string): void {
  const links = linksIn(text).filter((link) => !isReferralLink(link));
  expect(links.length, `${what}: a link in ${JSON.stringify(text)}`).toBeGreaterThan(0);
  for (const link of links) expect(link.startsWith(`${base}/`), `${what}: ${link}`).toBe(true);
  expect(text, what).not.toMatch(/evil\.example|gopher/);
}

describe('links, with PUBLIC_BASE_URL set, against a hostile Host and X-Forwarded-Proto', () => {
  let smtp: SmtpReceiver;
  let service: MailedService;
  let base: string;
  const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

  beforeAll(async () => {
    service = await startServiceWithMail({ PUBLIC_BASE_URL });
    ({ smtp, baseUrl: base } = service);
  }, 60_000);
  afterAll(() => service?.close());

  const mailTo = async (to: string, what: string): Promise<ReceivedMail> => {
    const mail = await smtp.next(to);
    expectOnlyLinksTo(PUBLIC_BASE_URL, mail.text, what);
    return mail;
  };

  it("the operator's owner invitation, a dashboard invitation, a password reset and a dashboard sign-in link", async () => {
    const org = await call(base, 'POST', '/admin/organizations', { headers: admin, body: { name: unique('Shop') } });
    const orgId = org.body.data.organization.id as string;
    const firstOwner = `${unique('owner')}@example.com`;
    const operator = await send(
      base,
      'POST',
      `/admin/organizations/${orgId}/invitations`,
      { ...EVIL, ...admin },
      { email: firstOwner },
    );
    expect(operator.status).toBe(201);
    expect(operator.body.data.accept_url).toMatch(
      new RegExp(`^${PUBLIC_BASE_URL}/dashboard/accept-invitation\\?token=`),
    );
    await mailTo(firstOwner, 'owner invitation e-mail');

    // The owner signs in from the public address; then a teammate's invitation is asked for with the attacker's Host.
    const token = new URL(operator.body.data.accept_url).searchParams.get('token');
    const fromPublicPages = { origin: PUBLIC_BASE_URL };
    expect(
      (
        await call(base, 'POST', '/auth/invitations/accept', {
          headers: fromPublicPages,
          body: { token, name: 'Olivia Owner', password: PASSWORD },
        })
      ).status,
    ).toBe(201);
    const signedIn = await fetch(`${base}/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...fromPublicPages },
      body: JSON.stringify({ email: firstOwner, password: PASSWORD }),
    });
    expect(signedIn.status).toBe(200);
    const owner = { email: firstOwner, cookie: sessionCookieOf(signedIn.headers) };
    const teammate = `${unique('mate')}@example.com`;
    const invited = await send(
      base,
      'POST',
      '/api/invitations',
      { ...EVIL, cookie: owner.cookie },
      { email: teammate },
    );
    expect(invited.status).toBe(201);
    expect(invited.body.data.accept_url).toMatch(
      new RegExp(`^${PUBLIC_BASE_URL}/dashboard/accept-invitation\\?token=`),
    );
    await mailTo(teammate, 'teammate invitation e-mail');

    const reset = await send(base, 'POST', '/auth/request-password-reset', EVIL, { email: owner.email });
    expect(reset.status).toBe(200);
    const resetMail = await mailTo(owner.email, 'password reset e-mail');
    expect(linksIn(resetMail.text)[0]).toMatch(new RegExp(`^${PUBLIC_BASE_URL}/dashboard/reset-password\\?token=`));

    // A sign-in link is only asked for from the public origin (better-auth checks Origin); a
    // script can claim it, and still chooses nothing of the link with Host.
    expect((await send(base, 'POST', '/auth/sign-in/magic-link', EVIL, { email: owner.email })).status).toBe(403);
    const claimingOrigin = { ...EVIL, origin: PUBLIC_BASE_URL };
    const magic = await send(base, 'POST', '/auth/sign-in/magic-link', claimingOrigin, { email: owner.email });
    expect(magic.status).toBe(200);
    await mailTo(owner.email, 'dashboard sign-in link e-mail');
    // Nor may the attacker choose where the link sends the browser once signed in.
    const redirected = await send(base, 'POST', '/auth/sign-in/magic-link', claimingOrigin, {
      email: owner.email,
      callbackURL: 'http://evil.example/welcome',
    });
    expect(redirected.status).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.mails.filter((mail) => /evil\.example|gopher/.test(mail.text))).toEqual([]);
  });

  it("a partner's sign-in link, application, approval and invitation", async () => {
    const m = await merchantWithProgram(base, { signup: 'approval' });
    const slug = unique('pat');
    const email = `${slug}@partners.example`;
    const applied = await send(
      base,
      'POST',
      `/partner/api/organizations/${m.organizationId}/programs/${m.program.id}/applications`,
      EVIL,
      { name: 'Pat', email, slug, accept_terms: true },
    );
    expect(applied.status).toBe(201);
    await mailTo(email, 'application received e-mail');
    const approved = await send(
      base,
      'PATCH',
      `/api/affiliates/${await affiliateIdOf(base, m.key, email)}`,
      { ...EVIL, ...m.key },
      { status: 'active' },
    );
    expect(approved.status).toBe(200);
    await mailTo(email, 'application approved e-mail');
    const link = await send(base, 'POST', `/partner/api/organizations/${m.organizationId}/sign-in-links`, EVIL, {
      email,
    });
    expect(link.status).toBe(202);
    const signIn = await mailTo(email, 'partner sign-in link e-mail');
    expect(linksIn(signIn.text)[0]).toMatch(
      new RegExp(`^${PUBLIC_BASE_URL}/portal/${m.organizationId}/sign-in/link\\?token=`),
    );
    const invitation = await send(
      base,
      'POST',
      `/api/affiliates/${await affiliateIdOf(base, m.key, email)}/invitation`,
      { ...EVIL, ...m.key },
    );
    expect(invitation.status).toBe(202);
    await mailTo(email, 'partner invitation e-mail');
  });

  it('the OpenAPI document names the public base URL, not the Host it was asked through', async () => {
    const doc = await send(base, 'GET', '/openapi.json', EVIL);
    expect(doc.body.servers[0]).toEqual({ url: PUBLIC_BASE_URL, description: 'This service.' });
  });
});

describe('PUBLIC_BASE_URL in the configuration', () => {
  it('defaults to this machine at the configured port, is an origin, and is required where that default cannot serve', () => {
    expect(loadConfig({}).PUBLIC_BASE_URL).toBe('http://localhost:3000');
    expect(loadConfig({}).publicBaseUrlDerived).toBe(true);
    expect(loadConfig({ PORT: '8080' }).PUBLIC_BASE_URL).toBe('http://localhost:8080');
    expect(loadConfig({ PORT: '8080', HOST: '10.1.2.3' }).PUBLIC_BASE_URL).toBe('http://10.1.2.3:8080');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://affiliates.example.com/' })).toMatchObject({
      PUBLIC_BASE_URL: 'https://affiliates.example.com',
      publicBaseUrlDerived: false,
    });
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'https://example.com/affiliates' })).toThrow(
      /PUBLIC_BASE_URL: must be an http:\/\/ or https:\/\/ origin/,
    );
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'javascript://example.com' })).toThrow(/PUBLIC_BASE_URL/);
    expect(() => loadConfig({ SMTP_URL: 'smtp://relay:587' })).toThrow(/PUBLIC_BASE_URL: required with SMTP_URL/);
    expect(() => loadConfig({ PORT: '0' })).toThrow(/PUBLIC_BASE_URL: required with PORT=0/);
    expect(loadConfig({ SMTP_URL: 'smtp://relay:587', PUBLIC_BASE_URL: 'https://a.example' }).PUBLIC_BASE_URL).toBe(
      'https://a.example',
    );
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describeWithPostgres('the quick start (the service as `npm start` runs it, PUBLIC_BASE_URL unset)', () => {
  let db: TestDatabase;
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  }, 60_000);
  afterAll(async () => {
    await stopService(service);
    await db?.stop();
  });

  /** The next e-mail to `to` the service logged (no SMTP_URL: e-mails are written to the log). */
  async function loggedMail(to: string, subject: RegExp, after = 0): Promise<{ text: string; index: number }> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const index = service!.logs.findIndex(
        (l, i) =>
          i >= after &&
          (l.mail as { to?: string } | undefined)?.to === to &&
          subject.test(String((l.mail as { subject?: string }).subject)),
      );
      if (index >= 0) return { text: (service!.logs[index].mail as { text: string }).text, index: index + 1 };
      if (Date.now() > deadline) throw new Error(`no e-mail to ${to} matching ${subject} in the log`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('every link handed out (owner and teammate invitations, password reset, partner sign-in link) is http://localhost:<PORT>, whatever the Host; the start says so', async () => {
    const port = await freePort();
    service = await startProcess(db.url, { PORT: String(port), PUBLIC_BASE_URL: '' });
    const expected = `http://localhost:${port}`;
    const admin = { authorization: `Bearer ${PROCESS_ADMIN_TOKEN}` };

    const org = await send(service.url, 'POST', '/admin/organizations', admin, { name: 'Acme' });
    expect(org.status).toBe(201);
    const email = `${unique('owner')}@example.com`;
    const invited = await send(
      service.url,
      'POST',
      `/admin/organizations/${org.body.data.organization.id}/invitations`,
      { ...EVIL, ...admin },
      { email },
    );
    expect(invited.status).toBe(201);
    expect(invited.body.data.accept_url).toMatch(new RegExp(`^${expected}/dashboard/accept-invitation\\?token=`));
    expectOnlyLinksTo(expected, (await loggedMail(email, /invit/i)).text, 'logged owner invitation');

    // The owner, signed in from the page the link opened (http://localhost:<PORT>), invites a teammate.
    const token = new URL(invited.body.data.accept_url).searchParams.get('token');
    expect(
      (
        await send(
          service.url,
          'POST',
          '/auth/invitations/accept',
          { origin: expected },
          { token, name: 'Olivia Owner', password: PASSWORD },
        )
      ).status,
    ).toBe(201);
    const signedIn = await fetch(`${service.url}/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: expected },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signedIn.status).toBe(200);
    const cookie = sessionCookieOf(signedIn.headers);
    const teammate = `${unique('mate')}@example.com`;
    const team = await send(service.url, 'POST', '/api/invitations', { ...EVIL, cookie }, { email: teammate });
    expect(team.status).toBe(201);
    expect(team.body.data.accept_url).toMatch(new RegExp(`^${expected}/dashboard/accept-invitation\\?token=`));
    expectOnlyLinksTo(expected, (await loggedMail(teammate, /invit/i)).text, 'logged teammate invitation');

    const reset = await send(service.url, 'POST', '/auth/request-password-reset', EVIL, { email });
    expect(reset.status).toBe(200);
    const resetMail = await loggedMail(email, /reset/i);
    expectOnlyLinksTo(expected, resetMail.text, 'logged password reset');
    expect(linksIn(resetMail.text)[0]).toMatch(new RegExp(`^${expected}/dashboard/reset-password\\?token=`));

    const key = { authorization: `Bearer ${org.body.data.api_key}` };
    const program = await send(service.url, 'POST', '/api/programs', key, {
      name: 'Partners',
      commission_value: 20,
      signup: 'open',
      website_url: PROGRAM_WEBSITE,
    });
    expect(program.status).toBe(201);
    const slug = unique('pat');
    const partner = `${slug}@partners.example`;
    const applied = await send(
      service.url,
      'POST',
      `/partner/api/organizations/${org.body.data.organization.id}/programs/${program.body.data.program.id}/applications`,
      EVIL,
      { name: 'Pat', email: partner, slug, accept_terms: true },
    );
    expect(applied.status).toBe(201);
    const welcome = await loggedMail(partner, /application/i);
    expectOnlyLinksTo(expected, welcome.text, 'logged application e-mail');
    const link = await send(
      service.url,
      'POST',
      `/partner/api/organizations/${org.body.data.organization.id}/sign-in-links`,
      EVIL,
      { email: partner },
    );
    expect(link.status).toBe(202);
    const signInMail = await loggedMail(partner, /sign in/i, welcome.index);
    expectOnlyLinksTo(expected, signInMail.text, 'logged partner sign-in link');
    expect(linksIn(signInMail.text)[0]).toMatch(
      new RegExp(`^${expected}/portal/${org.body.data.organization.id}/sign-in/link\\?token=`),
    );

    expect(
      service.logs.some((l) => l.publicBaseUrl === expected && /PUBLIC_BASE_URL is not set/.test(String(l.msg))),
    ).toBe(true);
  }, 120_000);
});
