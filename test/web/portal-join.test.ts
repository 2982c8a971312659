import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/people.js';
import {
  affiliateIdOf,
  fromPortal,
  type MailedService,
  merchantWithProgram,
  startServiceWithMail,
  unique,
} from './support/portal.js';
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
  call(base, 'POST', `/partner/api/organizations/${m.organizationId}/programs/${m.program.id}/applications`, {
    headers: fromPortal(base),
    body,
  });

describe('terms', () => {
  it('a program without terms needs no acceptance; one with terms refuses an application without it, naming accept_terms', async () => {
    const plain = await merchantWithProgram(base, { signup: 'open' });
    const slug = unique('una');
    const joined = await applyTo(plain, { name: 'Una', email: `${slug}@partners.example`, slug });
    expect(joined.status, JSON.stringify(joined.body)).toBe(201);

    const strict = await merchantWithProgram(base, { signup: 'open', terms: 'No spam.' });
    const other = unique('vic');
    expect(await applyTo(strict, { name: 'Vic', email: `${other}@partners.example`, slug: other })).toMatchObject({
      status: 400,
      body: { success: false, message: "accept_terms: You must accept the program's terms" },
    });
    expect(
      (await applyTo(strict, { name: 'Vic', email: `${other}@partners.example`, slug: other, accept_terms: false }))
        .body.message,
    ).toBe("accept_terms: You must accept the program's terms");
    expect(
      (await applyTo(strict, { name: 'Vic', email: `${other}@partners.example`, slug: other, accept_terms: true }))
        .status,
    ).toBe(201);
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
      expect(
        (
          await call(base, 'PATCH', `/api/affiliates/${await affiliateIdOf(base, m.key, email)}`, {
            headers: m.key,
            body: { status: 'active' },
          })
        ).status,
      ).toBe(200);
      const approved = await smtp.next(email);
      expect(approved.subject).toMatch(/^You're approved/);
      expect(approved.text).toContain(
        website ? `Your referral link: https://shop.example.com/?ref=${slug}` : `with ?ref=${slug} added at its end`,
      );
      signInLinkOf(approved);
    }
  });
});

describe('applying with an e-mail already in the program', () => {
  it('answers exactly as for a new e-mail, tells the partner by e-mail with a sign-in link, and makes no second membership', async () => {
    const m = await merchantWithProgram(base, { signup: 'approval' });
    const slug = unique('ida');
    const email = `${slug}@partners.example`;
    expect((await applyTo(m, { name: 'Ida', email, slug })).status).toBe(201);
    await smtp.next(email);
    // Approved: were the answer to reflect the membership, it would say `active` and the old slug.
    expect(
      (
        await call(base, 'PATCH', `/api/affiliates/${await affiliateIdOf(base, m.key, email)}`, {
          headers: m.key,
          body: { status: 'active' },
        })
      ).status,
    ).toBe(200);
    await smtp.next(email);

    const answerFor = (e: string, s: string) => ({
      success: true,
      data: { application: { program_id: m.program.id, email: e, slug: s, status: 'pending' } },
    });
    const newcomer = `${unique('jon')}@partners.example`;
    const newSlug = unique('jon');
    const fresh = await applyTo(m, { name: 'Jon', email: newcomer, slug: newSlug });
    const againSlug = unique('ida2');
    const again = await applyTo(m, { name: 'Ida Again', email: email.toUpperCase(), slug: againSlug });
    expect({ status: fresh.status, body: fresh.body }).toEqual({ status: 201, body: answerFor(newcomer, newSlug) });
    expect({ status: again.status, body: again.body }).toEqual({ status: 201, body: answerFor(email, againSlug) });
    expect(Object.keys(again.body.data.application).sort()).toEqual(Object.keys(fresh.body.data.application).sort());

    // The partner hears of it, with a link that signs them in.
    const told = await smtp.next(email);
    expect(told.subject).toMatch(/^Your application to /);
    expect(told.text).toContain('which already is a partner of it: there is nothing more to do');
    const link = signInLinkOf(told);
    const signedIn = await call(base, 'POST', '/partner/api/sign-in', {
      headers: fromPortal(base),
      body: { organization_id: m.organizationId, token: link.searchParams.get('token') },
    });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.partner.memberships).toMatchObject([{ slug, status: 'active' }]);
    // No second membership; the slug asked for stays free; nothing changed on the first.
    const listed = await call(base, 'GET', `/api/affiliates?email=${encodeURIComponent(email)}`, { headers: m.key });
    expect(listed.body.data.affiliates).toMatchObject([{ slug, status: 'active', name: 'Ida' }]);
    expect(
      (await call(base, 'GET', `/partner/api/organizations/${m.organizationId}/slugs/${againSlug}`)).body.data
        .available,
    ).toBe(true);

    // A taken slug is refused alike, whoever applies with it.
    const takenByStranger = await applyTo(m, { name: 'Kim', email: `${unique('kim')}@partners.example`, slug });
    const takenByPartner = await applyTo(m, { name: 'Ida', email, slug: newSlug });
    for (const taken of [takenByStranger, takenByPartner]) expect(taken.status).toBe(409);
    expect(takenByStranger.body).toEqual({ success: false, message: `slug: "${slug}" is already taken` });
    expect(takenByPartner.body).toEqual({ success: false, message: `slug: "${newSlug}" is already taken` });
  });
});
