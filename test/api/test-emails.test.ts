import { TEST_EMAILS_LIVE_MESSAGE } from '@affiliate-attribution/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { TEST_ADMIN_TOKEN } from '../support/server.js';
import { call, ownerSession, session, startService, type PeopleServer } from '../web/support/people.js';
import { affiliateIdOf, apply, fromPortal, partnerCookieOf, unique } from '../web/support/portal.js';
import { signInLinkOf, startSmtpReceiver, type SmtpReceiver } from '../web/support/smtp.js';
import { sql } from 'kysely';

/**
 * Test mode never e-mails a partner (spec/test-mode.md): the e-mails of a test organization's data
 * are kept as test e-mails (GET /api/test-emails) and logged, never handed to SMTP; a live
 * organization's still go out. A real service on PostgreSQL, sending through a real local SMTP
 * server: what reaches it is what a partner's inbox would get.
 */
let smtp: SmtpReceiver;
let service: PeopleServer;
let base: string;
const logLines: string[] = [];

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  service = await startService({ SMTP_URL: smtp.url, MAIL_FROM: 'Shop partners <partners@shop.example>' }, undefined, {
    write: (line) => void logLines.push(line),
  });
  base = service.baseUrl;
});
afterAll(async () => {
  await service?.close();
  await smtp?.close();
});

/** A merchant: its live key and its test key (the test organization's), each with a program of its own. */
async function merchant(program: Record<string, unknown> = {}) {
  const org = await call(base, 'POST', '/admin/organizations', {
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    body: { name: unique('Shop') },
  });
  expect(org.status, JSON.stringify(org.body)).toBe(201);
  const live = { authorization: `Bearer ${org.body.data.api_key}` };
  const test = { authorization: `Bearer ${org.body.data.test_api_key}` };
  const programOf = async (key: Record<string, string>) => {
    const created = await call(base, 'POST', '/api/programs', {
      headers: key,
      body: { name: 'Partners', commission_value: 20, signup: 'open', ...program },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.data.program.id as string;
  };
  const liveId = org.body.data.organization.id as string;
  // The API shows the account's (live) id in both modes; test partners' portal is the test organization's own id.
  const [twin] = await Db.of(service.db.orm).rows(
    sql<{ id: string }>`select id from organizations where live_organization_id = ${liveId}`,
  );
  return {
    liveId,
    testId: twin.id,
    live,
    test,
    liveProgram: await programOf(live),
    testProgram: await programOf(test),
  };
}

async function affiliate(key: Record<string, string>, programId: string, status = 'active') {
  const slug = unique('aff');
  const res = await call(base, 'POST', '/api/affiliates', {
    headers: key,
    body: { email: `${slug}@partners.example`, program_id: programId, slug, status },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.affiliate as { id: string; email: string; slug: string };
}

const testEmails = (key: Record<string, string>, query = '') =>
  call(base, 'GET', `/api/test-emails${query}`, { headers: key });

/** The test e-mails to `to`, waiting a little for those sent without holding up the request. */
async function testEmailsTo(key: Record<string, string>, to: string, count = 1) {
  for (let i = 0; i < 50; i++) {
    const list = await testEmails(key, '?limit=100');
    expect(list.status).toBe(200);
    const mine = list.body.data.test_emails.filter((m: { to: string }) => m.to === to);
    if (mine.length >= count) return mine;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no test e-mail to ${to}`);
}

describe('e-mails of test data', () => {
  it('a portal invitation of a test affiliate is kept, not sent; the live one is sent; the kept link signs the partner in', async () => {
    const m = await merchant();
    const testPartner = await affiliate(m.test, m.testProgram);
    const livePartner = await affiliate(m.live, m.liveProgram);

    expect((await call(base, 'POST', `/api/affiliates/${testPartner.id}/invitation`, { headers: m.test })).status).toBe(
      202,
    );
    expect((await call(base, 'POST', `/api/affiliates/${livePartner.id}/invitation`, { headers: m.live })).status).toBe(
      202,
    );
    // The live invitation, sent after the test one, arrives; the test one never reached SMTP.
    await smtp.next(livePartner.email);
    expect(smtp.mails.some((mail) => mail.to.includes(testPartner.email))).toBe(false);

    const [kept] = await testEmailsTo(m.test, testPartner.email);
    expect(kept).toMatchObject({ to: testPartner.email, livemode: false });
    expect(kept.subject).toMatch(/invites you to its partner portal$/);
    expect(Object.keys(kept).sort()).toEqual(['created_at', 'id', 'livemode', 'subject', 'text', 'to']);
    // The link text is whole: the merchant follows it to see the portal as that partner.
    const link = signInLinkOf({ to: [kept.to], from: '', subject: kept.subject, text: kept.text });
    expect(link.pathname).toBe(`/portal/${m.testId}/sign-in/link`);
    const signedIn = await call(base, 'POST', '/partner/api/sign-in', {
      headers: fromPortal(base),
      body: { organization_id: m.testId, token: link.searchParams.get('token') },
    });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.partner.email).toBe(testPartner.email);
    partnerCookieOf(signedIn.headers);

    // And logged, for an operator reading the log.
    const logged = logLines.map((line) => JSON.parse(line)).find((entry) => entry.test_email_id === kept.id);
    expect(logged).toMatchObject({ organization_id: m.testId, mail: { to: testPartner.email, subject: kept.subject } });
    expect(logged.msg).toBe(
      `test mode: e-mail to ${testPartner.email} not sent, kept as a test e-mail: ${kept.subject}`,
    );
    // Without its text: the link in it signs in (the dashboard's Test e-mails page shows it).
    expect(kept.text).toContain('token=');
    expect(JSON.stringify(logged)).not.toContain('token=');
  });

  it('applying to a test program, asking for a sign-in link and the decision on an application: all kept, none sent', async () => {
    const m = await merchant({ signup: 'approval' });
    const slug = unique('ann');
    const email = `${slug}@partners.example`;
    const applied = await apply(base, m.testId, m.testProgram, { name: 'Ann', email, slug });
    expect(applied.status, JSON.stringify(applied.body)).toBe(201);
    expect((await testEmailsTo(m.test, email, 1))[0].text).toContain("awaits the merchant's approval");

    expect(
      (
        await call(base, 'POST', `/partner/api/organizations/${m.testId}/sign-in-links`, {
          headers: fromPortal(base),
          body: { email },
        })
      ).status,
    ).toBe(202);
    const withLink = await testEmailsTo(m.test, email, 2);
    expect(withLink[0].subject).toMatch(/^Sign in to .*'s partner portal$/);

    expect(
      (
        await call(base, 'PATCH', `/api/affiliates/${await affiliateIdOf(base, m.test, email)}`, {
          headers: m.test,
          body: { status: 'active' },
        })
      ).status,
    ).toBe(200);
    const decided = await testEmailsTo(m.test, email, 3);
    expect(decided[0].subject).toMatch(/^You're approved/);
    expect(decided.map((mail: { livemode: boolean }) => mail.livemode)).toEqual([false, false, false]);

    // A live application goes out by e-mail as ever (sent after the test ones: they had their chance to arrive).
    const liveSlug = unique('bob');
    expect(
      (
        await apply(base, m.liveId, m.liveProgram, {
          name: 'Bob',
          email: `${liveSlug}@partners.example`,
          slug: liveSlug,
        })
      ).status,
    ).toBe(201);
    await smtp.next(`${liveSlug}@partners.example`);
    expect(smtp.mails.some((mail) => mail.to.includes(email))).toBe(false);
  });

  it('GET /api/test-emails: 403 with a live key; newest first, paged; each test organization sees its own', async () => {
    const m = await merchant();
    const refused = await testEmails(m.live);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ success: false, message: TEST_EMAILS_LIVE_MESSAGE });

    const partners = [];
    for (let i = 0; i < 3; i++) {
      const partner = await affiliate(m.test, m.testProgram);
      expect((await call(base, 'POST', `/api/affiliates/${partner.id}/invitation`, { headers: m.test })).status).toBe(
        202,
      );
      partners.push(partner.email);
    }
    const first = await testEmails(m.test, '?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.data.test_emails.map((mail: { to: string }) => mail.to)).toEqual([partners[2], partners[1]]);
    expect(first.body.data.next_cursor).toEqual(expect.any(String));
    const second = await testEmails(m.test, `?limit=2&cursor=${encodeURIComponent(first.body.data.next_cursor)}`);
    expect(second.body.data).toMatchObject({ next_cursor: null });
    expect(second.body.data.test_emails.map((mail: { to: string }) => mail.to)).toEqual([partners[0]]);

    const other = await merchant();
    expect((await testEmails(other.test)).body.data).toEqual({ test_emails: [], next_cursor: null });
    expect((await testEmails(m.test, '?cursor=nope')).body).toEqual({
      success: false,
      message: 'cursor: Invalid cursor',
    });
  });

  it('merchant staff e-mails are no test data: a dashboard invitation made in test mode is sent', async () => {
    // An owner in the dashboard's test mode (a test key manages no people: common/access.ts).
    const owner = await ownerSession(base);
    const inTestMode = { ...session(base, owner.cookie), 'x-mode': 'test' };
    const email = `${unique('staff')}@shop.example`;
    const invited = await call(base, 'POST', '/api/invitations', {
      headers: inTestMode,
      body: { email, role: 'member' },
    });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    expect((await smtp.next(email)).subject).toMatch(/affiliate dashboard$/);
    expect((await testEmails(inTestMode)).body.data.test_emails).toEqual([]);
  });
});
