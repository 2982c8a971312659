import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, ownerSession, startService, type PeopleServer } from './support/people.js';
import { apply, fromPortal, signedInPartner, unique } from './support/portal.js';
import { startSmtpReceiver, type SmtpReceiver } from './support/smtp.js';
import { TEST_ADMIN_TOKEN } from '../support/server.js';

/**
 * Issue 47, item 10 (the e-mails): a partner is e-mailed when they earn a commission and when a
 * payout is sent, once each, unless they turned it off in the portal; the merchant's owners are
 * e-mailed when a partner applies. Through the real mail path (the queue, SMTP to a local server).
 */
let smtp: SmtpReceiver;
let service: PeopleServer;
let base: string;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  service = await startService({ SMTP_URL: smtp.url });
  base = service.baseUrl;
});
afterAll(async () => {
  await service?.close();
  await smtp?.close();
});

const round = () => service.partnerNotices!.runOnce();
const settle = () => new Promise((r) => setTimeout(r, 400));
const mailsTo = (email: string, subject: string) =>
  smtp.mails.filter((m) => m.to.includes(email) && m.subject.includes(subject));
/** The e-mails to `email` whose subject has `subject`, once there are `count` of them (the queue's worker sends them). */
async function arrived(email: string, subject: string, count = 1) {
  const deadline = Date.now() + 10_000;
  while (mailsTo(email, subject).length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await settle(); // and no more after them
  return mailsTo(email, subject);
}

async function merchant(program: Record<string, unknown> = {}) {
  const owner = await ownerSession(base, unique('Shop'));
  const key = { authorization: `Bearer ${owner.apiKey}` };
  const created = await call(base, 'POST', '/api/programs', {
    headers: key,
    body: { name: 'Shop Friends', commission_value: 20, currency: 'USD', hold_days: 0, signup: 'open', ...program },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { owner, key, organizationId: owner.organization.id, program: created.body.data.program as { id: string } };
}

async function sale(key: Record<string, string>, slug: string, amount: number) {
  const customerId = `cus_${unique('c').replace(/-/g, '')}`;
  expect(
    (await call(base, 'POST', '/api/customers', { headers: key, body: { customer_id: customerId, ref: slug } })).status,
  ).toBe(201);
  const conversion = await call(base, 'POST', '/api/conversions', {
    headers: key,
    body: { external_id: unique('inv'), amount, customer_id: customerId },
  });
  expect(conversion.status, JSON.stringify(conversion.body)).toBe(201);
}

describe('e-mails to partners: a commission earned, a payout sent', () => {
  it('a sale e-mails its partner once, naming the merchant, the program and the amount, with the portal link', async () => {
    const m = await merchant();
    const partner = await signedInPartner(base, smtp, m.organizationId, m.program.id);
    await sale(m.key, partner.slug, 100);
    // Two instances' rounds at the same time: one of them queues it.
    const queued = await Promise.all([round(), round()]);
    expect(queued[0] + queued[1]).toBe(1);
    const mail = await smtp.next(partner.email);
    expect(mail.subject).toBe(`You earned a 20.00 USD commission with ${m.owner.organization.name}`);
    expect(mail.text).toContain(`in ${m.owner.organization.name}'s partner program "Shop Friends"`);
    expect(mail.text).toContain(`Your partner portal: ${base}/portal/${m.organizationId}`);
    expect(mail.text).toContain("turn these e-mails off in your partner portal's settings");
    // hold_days 0: approved at once, no hold date to wait for.
    expect(mail.text).toContain('It is approved and goes into your next payout.');
    // Later rounds: nothing more.
    expect(await Promise.all([round(), round()])).toEqual([0, 0]);
    await settle();
    expect(mailsTo(partner.email, 'You earned')).toHaveLength(1);
  });

  it('a payout marked paid e-mails its partner once, with the reference', async () => {
    const m = await merchant();
    const partner = await signedInPartner(base, smtp, m.organizationId, m.program.id);
    const bonus = await call(base, 'POST', '/api/commissions', {
      headers: m.key,
      body: { affiliate_id: partner.affiliateId, amount: 33, description: 'launch bonus' },
    });
    expect(bonus.status).toBe(201);
    const [payout] = (await call(base, 'POST', '/api/payouts', { headers: m.key, body: {} })).body.data.payouts;
    expect(
      (await call(base, 'POST', `/api/payouts/${payout.id}/paid`, { headers: m.key, body: { reference: 'TR-0042' } }))
        .status,
    ).toBe(200);
    expect(await round()).toBe(2); // the bonus earned, then the payout sent
    const [sent] = await arrived(partner.email, 'was sent');
    expect(sent.subject).toBe(`Your payout of 33.00 USD from ${m.owner.organization.name} was sent`);
    expect(sent.text).toContain('(reference TR-0042)');
    expect(sent.text).toContain(`Your partner portal: ${base}/portal/${m.organizationId}`);
    expect(mailsTo(partner.email, 'You earned a 33.00 USD commission')).toHaveLength(1);
    expect(await round()).toBe(0);
  });

  it('a partner who turned an e-mail off in the portal does not get it; the other stays on', async () => {
    const m = await merchant();
    const partner = await signedInPartner(base, smtp, m.organizationId, m.program.id);
    const me = await call(base, 'GET', '/partner/api/me', { headers: { cookie: partner.cookie } });
    expect(me.body.data.partner.email_notifications).toEqual({ commissions: true, payouts: true });
    const off = await call(base, 'PATCH', '/partner/api/me', {
      headers: fromPortal(base, partner.cookie),
      body: { email_notifications: { commissions: false } },
    });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.data.partner.email_notifications).toEqual({ commissions: false, payouts: true });
    expect(off.body.data.partner.payout_email).toBe(partner.email);

    await sale(m.key, partner.slug, 100);
    expect(await round()).toBe(0);
    const [payout] = (await call(base, 'POST', '/api/payouts', { headers: m.key, body: {} })).body.data.payouts;
    expect((await call(base, 'POST', `/api/payouts/${payout.id}/paid`, { headers: m.key, body: {} })).status).toBe(200);
    expect(await round()).toBe(1);
    expect(await arrived(partner.email, 'was sent')).toHaveLength(1);
    expect(mailsTo(partner.email, 'You earned')).toHaveLength(0);
    // Turned back on, the commission already decided on is not sent late: only new ones are.
    await call(base, 'PATCH', '/partner/api/me', {
      headers: fromPortal(base, partner.cookie),
      body: { email_notifications: { commissions: true } },
    });
    expect(await round()).toBe(0);
  });

  it('PATCH /partner/api/me without a setting, or with an unknown one, is a 400', async () => {
    const m = await merchant();
    const partner = await signedInPartner(base, smtp, m.organizationId, m.program.id);
    for (const body of [
      {},
      { email_notifications: { newsletters: false } },
      { email_notifications: { payouts: 'no' } },
    ]) {
      const res = await call(base, 'PATCH', '/partner/api/me', { headers: fromPortal(base, partner.cookie), body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.success).toBe(false);
    }
  });
});

describe("e-mails to the merchant's owners: a partner applied", () => {
  it('an application to an approval program e-mails the owner once, with the dashboard link; a repeat does not', async () => {
    const m = await merchant({ signup: 'approval' });
    const slug = unique('ada');
    const email = `${slug}@partners.example`;
    // Applying again (another slug: the first is hers) makes no second membership, and no second e-mail.
    for (const asked of [slug, `${slug}-again`])
      expect(
        (await apply(base, m.organizationId, m.program.id, { name: 'Ada Lovelace', email, slug: asked })).status,
      ).toBe(201);
    const [mail] = await arrived(m.owner.email, 'New partner');
    expect(mail.subject).toBe('New partner application: Ada Lovelace awaits your approval');
    expect(mail.text).toContain(`Ada Lovelace (${email}) applied to your partner program "Shop Friends"`);
    const affiliateId = (await call(base, 'GET', `/api/affiliates?email=${email}`, { headers: m.key })).body.data
      .affiliates[0].id;
    expect(mail.text).toContain(`Open in the dashboard: ${base}/dashboard/affiliates/${affiliateId}`);
    expect(mail.text).toContain(`— ${m.owner.organization.name}'s partner program "Shop Friends"`);
    expect(await arrived(m.owner.email, 'New partner')).toHaveLength(1);
  });
});

describe('in test mode', () => {
  it("a test partner's commission e-mail is kept as a test e-mail, never sent", async () => {
    const org = await call(base, 'POST', '/admin/organizations', {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      body: { name: unique('Shop') },
    });
    expect(org.status).toBe(201);
    const test = { authorization: `Bearer ${org.body.data.test_api_key}` };
    const program = await call(base, 'POST', '/api/programs', {
      headers: test,
      body: { name: 'Test Friends', commission_value: 20, currency: 'USD', hold_days: 0, signup: 'open' },
    });
    const slug = unique('tp');
    const email = `${slug}@partners.example`;
    const created = await call(base, 'POST', '/api/affiliates', {
      headers: test,
      body: { email, program_id: program.body.data.program.id, slug },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await sale(test, slug, 50);
    expect(await round()).toBe(1);
    const kept = await call(base, 'GET', '/api/test-emails', { headers: test });
    expect(kept.body.data.test_emails.map((m: { to: string; subject: string }) => [m.to, m.subject])).toContainEqual([
      email,
      `You earned a 10.00 USD commission with ${org.body.data.organization.name}`,
    ]);
    await settle();
    expect(smtp.mails.filter((m) => m.to.includes(email))).toHaveLength(0);
  });
});
