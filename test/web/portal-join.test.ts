import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/people.js';
import { fromPortal, type MailedService, merchantWithProgram, startServiceWithMail, unique } from './support/portal.js';
import { signInLinkOf, type SmtpReceiver } from './support/smtp.js';

/** Joining a program: terms only where there are some, and the approval e-mail's referral link. */
let smtp: SmtpReceiver;
let service: MailedService;
let base: string;

beforeAll(async () => {
  service = await startServiceWithMail();
  ({ smtp, baseUrl: base } = service);
});
afterAll(() => service?.close());

/** An application as the join page sends it, without `accept_terms` unless given. */
const applyTo = (m: { organizationId: string; program: { id: string } }, body: Record<string, unknown>) =>
  call(base, 'POST', `/partner/api/organizations/${m.organizationId}/programs/${m.program.id}/applications`, { headers: fromPortal(base), body });

describe('terms', () => {
  it('a program without terms needs no acceptance; one with terms refuses an application without it, naming accept_terms', async () => {
    const plain = await merchantWithProgram(base, { signup: 'open' });
    const slug = unique('una');
    const joined = await applyTo(plain, { name: 'Una', email: `${slug}@partners.example`, slug });
    expect(joined.status, JSON.stringify(joined.body)).toBe(201);

    const strict = await merchantWithProgram(base, { signup: 'open', terms: 'No spam.' });
    const other = unique('vic');
    expect(await applyTo(strict, { name: 'Vic', email: `${other}@partners.example`, slug: other })).toMatchObject({ status: 400, body: { success: false, message: "accept_terms: You must accept the program's terms" } });
    expect((await applyTo(strict, { name: 'Vic', email: `${other}@partners.example`, slug: other, accept_terms: false })).body.message).toBe("accept_terms: You must accept the program's terms");
    expect((await applyTo(strict, { name: 'Vic', email: `${other}@partners.example`, slug: other, accept_terms: true })).status).toBe(201);
  });
});

describe('the approval e-mail', () => {
  it('gives the referral link: the website with ?ref=, or, without a website, the ?ref= to add to any link of the site', async () => {
    for (const website of ['https://shop.example.com/', null]) {
      const m = await merchantWithProgram(base, { signup: 'approval', website_url: website });
      const slug = unique('wes');
      const email = `${slug}@partners.example`;
      const applied = await applyTo(m, { name: 'Wes', email, slug, accept_terms: true });
      expect(applied.status, JSON.stringify(applied.body)).toBe(201);
      await smtp.next(email);
      expect((await call(base, 'PATCH', `/api/affiliates/${applied.body.data.application.affiliate_id}`, { headers: m.key, body: { status: 'active' } })).status).toBe(200);
      const approved = await smtp.next(email);
      expect(approved.subject).toMatch(/^You're approved/);
      expect(approved.text).toContain(website ? `Your referral link: https://shop.example.com/?ref=${slug}` : `with ?ref=${slug} added at its end`);
      signInLinkOf(approved);
    }
  });
});
