import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startService } from './support/people.js';
import {
  affiliateIdOf,
  apply,
  fromPortal,
  type MailedService,
  merchantWithProgram,
  partnerCookieOf,
  signedInPartner,
  signInByMail,
  startServiceWithMail,
  unique,
} from './support/portal.js';
import { signInLinkOf, type SmtpReceiver } from './support/smtp.js';

/**
 * The partner portal's API (/partner/api) against a real service on PostgreSQL, its e-mails
 * delivered by SMTP (nodemailer) to a real local SMTP server.
 */
let smtp: SmtpReceiver;
let service: MailedService;
let base: string;

beforeAll(async () => {
  service = await startServiceWithMail({ MAIL_FROM: 'Shop partners <partners@shop.example>' });
  ({ smtp, baseUrl: base } = service);
});
afterAll(() => service?.close());

const get = (path: string, cookie: string) => call(base, 'GET', path, { headers: { cookie } });

describe('joining a program', () => {
  it('shows the join page; an open program makes an active partner, an approval program a pending one the merchant approves; a closed one takes no application', async () => {
    const open = await merchantWithProgram(base, { signup: 'open', terms: 'Be nice.' });
    const page = await call(
      base,
      'GET',
      `/partner/api/organizations/${open.organizationId}/programs/${open.program.id}`,
    );
    expect(page.status).toBe(200);
    expect(page.body.data.program).toMatchObject({
      signup: 'open',
      terms: 'Be nice.',
      commission_value: 20,
      website_url: 'https://shop.example.com/',
    });

    const email = `${unique('ann')}@partners.example`;
    const active = await apply(base, open.organizationId, open.program.id, {
      name: 'Ann',
      email: email.toUpperCase(),
      slug: unique('ann'),
      payout_email: 'ann-paypal@partners.example',
    });
    expect(active.status).toBe(201);
    expect(active.body.data.application).toMatchObject({ status: 'active', email });
    const welcome = await smtp.next(email);
    expect(welcome.from).toBe('partners@shop.example');
    expect(welcome.text).toContain('your referral links work now');
    signInLinkOf(welcome);

    const approval = await merchantWithProgram(base, { signup: 'approval' });
    const slug = unique('bob');
    const pending = await apply(base, approval.organizationId, approval.program.id, {
      name: 'Bob',
      email: `${slug}@partners.example`,
      slug,
    });
    expect(pending.body.data.application.status).toBe('pending');
    expect((await smtp.next(`${slug}@partners.example`)).text).toContain("awaits the merchant's approval");
    // Until approved, the slug attributes nothing.
    expect((await call(base, 'POST', '/api/clicks', { headers: approval.key, body: { ref: slug } })).status).toBe(404);
    const approved = await call(
      base,
      'PATCH',
      `/api/affiliates/${await affiliateIdOf(base, approval.key, `${slug}@partners.example`)}`,
      { headers: approval.key, body: { status: 'active' } },
    );
    expect(approved.body.data.affiliate.status).toBe('active');
    const news = await smtp.next(`${slug}@partners.example`);
    expect(news.subject).toMatch(/^You're approved/);
    signInLinkOf(news);
    expect((await call(base, 'POST', '/api/clicks', { headers: approval.key, body: { ref: slug } })).status).toBe(201);

    // A rejected application: the partner is told, and the membership is disabled.
    const declined = unique('dan');
    expect(
      (
        await apply(base, approval.organizationId, approval.program.id, {
          name: 'Dan',
          email: `${declined}@partners.example`,
          slug: declined,
        })
      ).status,
    ).toBe(201);
    await smtp.next(`${declined}@partners.example`);
    const rejected = await call(
      base,
      'PATCH',
      `/api/affiliates/${await affiliateIdOf(base, approval.key, `${declined}@partners.example`)}`,
      { headers: approval.key, body: { status: 'disabled' } },
    );
    expect(rejected.body.data.affiliate.status).toBe('disabled');
    expect((await smtp.next(`${declined}@partners.example`)).text).toContain('did not approve your application');

    const closed = await merchantWithProgram(base, { signup: 'closed' });
    const refused = await apply(base, closed.organizationId, closed.program.id, {
      name: 'Cy',
      email: 'cy@partners.example',
      slug: unique('cy'),
    });
    expect(refused).toMatchObject({
      status: 403,
      body: { success: false, message: 'This program takes no applications' },
    });
  });

  it('checks the slug as typed, validates the form field by field, and refuses a taken slug', async () => {
    const m = await merchantWithProgram(base, { signup: 'open' });
    const slug = unique('dee');
    const free = await call(base, 'GET', `/partner/api/organizations/${m.organizationId}/slugs/${slug}`);
    expect(free.body.data).toEqual({ slug, available: true });
    const malformed = await call(base, 'GET', `/partner/api/organizations/${m.organizationId}/slugs/Not%20A%20Slug`);
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/^slug: /);

    expect(
      (
        await apply(base, m.organizationId, m.program.id, {
          name: 'Dee',
          email: 'dee@partners.example',
          slug,
          accept_terms: false,
        })
      ).body.message,
    ).toBe("accept_terms: You must accept the program's terms");
    expect(
      (await apply(base, m.organizationId, m.program.id, { name: 'Dee', email: 'not-an-email', slug })).body.message,
    ).toMatch(/^email: /);
    expect(
      (await apply(base, m.organizationId, m.program.id, { name: 'Dee', email: 'dee@partners.example', slug })).status,
    ).toBe(201);
    expect(
      (await call(base, 'GET', `/partner/api/organizations/${m.organizationId}/slugs/${slug}`)).body.data.available,
    ).toBe(false);
    const taken = await apply(base, m.organizationId, m.program.id, {
      name: 'Eve',
      email: 'eve@partners.example',
      slug,
    });
    expect(taken).toMatchObject({ status: 409, body: { message: `slug: "${slug}" is already taken` } });
    // A second application of the same e-mail is answered as a first one (portal-join.test.ts): no second membership.
    const again = await apply(base, m.organizationId, m.program.id, {
      name: 'Dee',
      email: 'dee@partners.example',
      slug: unique('dee2'),
    });
    expect(again.status).toBe(201);
    expect(
      (await call(base, 'GET', '/api/affiliates?email=dee%40partners.example', { headers: m.key })).body.data
        .affiliates,
    ).toHaveLength(1);
    // From another site: refused.
    const crossSite = await call(
      base,
      'POST',
      `/partner/api/organizations/${m.organizationId}/programs/${m.program.id}/applications`,
      {
        headers: { origin: 'https://evil.example' },
        body: { name: 'X', email: 'x@partners.example', slug: unique('x'), accept_terms: true },
      },
    );
    expect(crossSite.status).toBe(403);
  });

  it('a merchant invites an affiliate by e-mail; the link signs them in', async () => {
    const m = await merchantWithProgram(base, { signup: 'closed' });
    const affiliate = await call(base, 'POST', '/api/affiliates', {
      headers: m.key,
      body: { email: 'invited@partners.example', program_id: m.program.id, slug: unique('inv') },
    });
    const invited = await call(base, 'POST', `/api/affiliates/${affiliate.body.data.affiliate.id}/invitation`, {
      headers: m.key,
    });
    expect(invited.status).toBe(202);
    expect(invited.body.data.email).toBe('invited@partners.example');
    expect(JSON.stringify(invited.body)).not.toContain('token');
    const cookie = await signInByMail(base, smtp, 'invited@partners.example');
    expect((await get('/partner/api/me', cookie)).body.data.partner.memberships[0].status).toBe('active');
  });
});

describe('signing in by an e-mailed link', () => {
  it('works once: a used link, an expired one, or one for another organization is refused; the session cookie is HttpOnly and SameSite=Lax', async () => {
    const m = await merchantWithProgram(base, { signup: 'open' });
    const slug = unique('fay');
    const email = `${slug}@partners.example`;
    await apply(base, m.organizationId, m.program.id, { name: 'Fay', email, slug });
    const link = signInLinkOf(await smtp.next(email));
    const token = link.searchParams.get('token')!;
    const other = await merchantWithProgram(base);
    expect(
      (
        await call(base, 'POST', '/partner/api/sign-in', {
          headers: fromPortal(base),
          body: { organization_id: other.organizationId, token },
        })
      ).status,
    ).toBe(401);

    const first = await call(base, 'POST', '/partner/api/sign-in', {
      headers: fromPortal(base),
      body: { organization_id: m.organizationId, token },
    });
    expect(first.status).toBe(200);
    const setCookie = first.headers.getSetCookie()[0];
    expect(setCookie).toMatch(/^svc\.partner_session=/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Path=\/partner\/api/);
    const second = await call(base, 'POST', '/partner/api/sign-in', {
      headers: fromPortal(base),
      body: { organization_id: m.organizationId, token },
    });
    expect(second).toMatchObject({
      status: 401,
      body: { success: false, message: expect.stringMatching(/not valid/) },
    });

    // A link past its 15 minutes.
    expect(
      (
        await call(base, 'POST', `/partner/api/organizations/${m.organizationId}/sign-in-links`, {
          headers: fromPortal(base),
          body: { email },
        })
      ).status,
    ).toBe(202);
    const stale = signInLinkOf(await smtp.next(email)).searchParams.get('token')!;
    await service.db.orm.em
      .getConnection()
      .execute(
        `update partner_sign_in_links set expires_at = now() - interval '1 second' where organization_id = ? and used_at is null`,
        [m.organizationId],
      );
    expect(
      (
        await call(base, 'POST', '/partner/api/sign-in', {
          headers: fromPortal(base),
          body: { organization_id: m.organizationId, token: stale },
        })
      ).status,
    ).toBe(401);

    // Signing out ends the session.
    const cookie = partnerCookieOf(first.headers);
    expect((await get('/partner/api/me', cookie)).status).toBe(200);
    expect((await call(base, 'POST', '/partner/api/sign-out', { headers: fromPortal(base, cookie) })).status).toBe(200);
    expect((await get('/partner/api/me', cookie)).status).toBe(401);
  });

  it('answers a sign-in link request the same for a stranger, and sends them nothing', async () => {
    const m = await merchantWithProgram(base);
    const stranger = await call(base, 'POST', `/partner/api/organizations/${m.organizationId}/sign-in-links`, {
      headers: fromPortal(base),
      body: { email: 'nobody@partners.example' },
    });
    expect(stranger).toMatchObject({ status: 202, body: { success: true, data: { expires_in_seconds: 900 } } });
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.mails.some((mail) => mail.to.includes('nobody@partners.example'))).toBe(false);
  });

  it('rate limits link requests per e-mail and per address', async () => {
    const limited = await startService(
      { SMTP_URL: smtp.url, SIGN_IN_LINKS_PER_EMAIL_MAX: 2, SIGN_IN_RATE_LIMIT_MAX: 4, TRUST_PROXY: true },
      service.db,
    );
    try {
      const m = await merchantWithProgram(limited.baseUrl);
      const ask = (email: string, address: string) =>
        call(limited.baseUrl, 'POST', `/partner/api/organizations/${m.organizationId}/sign-in-links`, {
          headers: { ...fromPortal(limited.baseUrl), 'x-forwarded-for': address },
          body: { email },
        });
      // Per e-mail: the third request for one address of mail is refused, from whichever client address.
      expect((await ask('same@partners.example', '10.0.0.1')).status).toBe(202);
      expect((await ask('SAME@partners.example', '10.0.0.2')).status).toBe(202);
      const perEmail = await ask('same@partners.example', '10.0.0.3');
      expect(perEmail.status).toBe(429);
      expect(Number(perEmail.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await ask('other@partners.example', '10.0.0.3')).status).toBe(202);
      // Per client address: the fifth request from one address is refused, whatever the e-mail.
      for (let i = 0; i < 4; i++) expect((await ask(`a${i}@partners.example`, '10.0.0.9')).status).toBe(202);
      expect((await ask('a9@partners.example', '10.0.0.9')).status).toBe(429);
      expect((await ask('a9@partners.example', '10.0.0.10')).status).toBe(202);
    } finally {
      await limited.close();
    }
  });
});

describe('what a partner sees', () => {
  it("only their own rows: partner A cannot read B's, by program id or by another organization's cookie", async () => {
    const m = await merchantWithProgram(base, { signup: 'open' });
    const second = await call(base, 'POST', '/api/programs', {
      headers: m.key,
      body: { name: 'Second', commission_value: 10, signup: 'open' },
    });
    const a = await signedInPartner(base, smtp, m.organizationId, m.program.id);
    const b = await signedInPartner(base, smtp, m.organizationId, second.body.data.program.id);
    for (const [partner, n] of [
      [a, 1],
      [b, 2],
    ] as const) {
      await call(base, 'POST', '/api/conversions', {
        headers: m.key,
        body: { external_id: unique('o'), amount: 100 * n, ref: partner.slug, customer_id: unique(`cus_${n}`) },
      });
    }
    const aCommissions = (await get('/partner/api/commissions', a.cookie)).body.data.commissions;
    expect(aCommissions).toHaveLength(1);
    expect(aCommissions[0]).toMatchObject({ amount: 20, status: 'pending', program_id: m.program.id });
    const bCommissions = (await get('/partner/api/commissions', b.cookie)).body.data.commissions;
    expect(bCommissions).toHaveLength(1);
    expect(bCommissions[0].amount).toBe(20);
    // B's program through A's session: 404, as for any program that is not A's.
    for (const path of ['commissions', 'customers', 'payouts']) {
      expect((await get(`/partner/api/${path}?program_id=${second.body.data.program.id}`, a.cookie)).status, path).toBe(
        404,
      );
    }
    expect(
      (await get(`/partner/api/link?program_id=${second.body.data.program.id}&url=https://shop.example.com/`, a.cookie))
        .status,
    ).toBe(404);
    // A's token presented for another organization finds no session.
    const other = await merchantWithProgram(base);
    const forged = a.cookie.replace(/=[0-9a-f-]{36}\./, `=${other.organizationId}.`);
    expect(forged).not.toBe(a.cookie);
    expect((await get('/partner/api/me', forged)).status).toBe(401);
    // No cookie, no data.
    expect((await call(base, 'GET', '/partner/api/commissions')).status).toBe(401);
  });

  it('the same e-mail with two merchants is two partners, each seeing only its merchant', async () => {
    const one = await merchantWithProgram(base, { signup: 'open' });
    const two = await merchantWithProgram(base, { signup: 'open' });
    const email = `${unique('gus')}@partners.example`;
    await apply(base, one.organizationId, one.program.id, { name: 'Gus', email, slug: unique('gus') });
    const cookieOne = await signInByMail(base, smtp, email);
    await apply(base, two.organizationId, two.program.id, { name: 'Gus', email, slug: unique('gus') });
    const cookieTwo = await signInByMail(base, smtp, email);
    const meOne = (await get('/partner/api/me', cookieOne)).body.data.partner;
    const meTwo = (await get('/partner/api/me', cookieTwo)).body.data.partner;
    expect(meOne.organization.id).toBe(one.organizationId);
    expect(meTwo.organization.id).toBe(two.organizationId);
    expect(meOne.memberships.map((x: { program: { id: string } }) => x.program.id)).toEqual([one.program.id]);
    expect(meTwo.memberships.map((x: { program: { id: string } }) => x.program.id)).toEqual([two.program.id]);
  });

  it("self_referral: a click from the address and browser of the partner's own portal sign-in holds its commission; another browser's does not", async () => {
    const m = await merchantWithProgram(base, { signup: 'open' });
    const slug = unique('self');
    const email = `${slug}@partners.example`;
    expect((await apply(base, m.organizationId, m.program.id, { name: 'Self Referrer', email, slug })).status).toBe(
      201,
    );
    const partnerBrowser = 'Mozilla/5.0 (PartnerLaptop) Chrome/131.0';
    const link = signInLinkOf(await smtp.next(email));
    const signedIn = await call(base, 'POST', '/partner/api/sign-in', {
      headers: { ...fromPortal(base), 'user-agent': partnerBrowser },
      body: { organization_id: m.organizationId, token: link.searchParams.get('token') },
    });
    expect(signedIn.status).toBe(200);
    // The service was reached from 127.0.0.1: the partner's own clicks come from there, in the same browser.
    const sale = async (userAgent: string) => {
      const click = await call(base, 'POST', '/api/clicks', {
        headers: m.key,
        body: { ref: slug, ip: '127.0.0.1', user_agent: userAgent },
      });
      expect(click.status).toBe(201);
      const conversion = await call(base, 'POST', '/api/conversions', {
        headers: m.key,
        body: {
          external_id: unique('o'),
          amount: 100,
          customer_id: unique('cus'),
          cookie_id: click.body.data.click.cookie_id,
        },
      });
      expect(conversion.status).toBe(201);
      const listed = await call(
        base,
        'GET',
        `/api/commissions?affiliate_id=${conversion.body.data.conversion.affiliate_id}`,
        { headers: m.key },
      );
      return listed.body.data.commissions.find(
        (c: { conversion_id: string }) => c.conversion_id === conversion.body.data.conversion.id,
      );
    };
    const own = await sale(partnerBrowser);
    expect(own).toMatchObject({
      status: 'on_hold',
      hold_reasons: [{ rule: 'self_referral', detail: expect.stringContaining('127.0.0.1') }],
    });
    const visitor = await sale('Mozilla/5.0 (VisitorPhone) Safari/605.1');
    expect(visitor).toMatchObject({ status: 'pending', hold_reasons: [] });
  });

  it('never shows a customer e-mail (nor a whole customer id), anywhere in the portal', async () => {
    const m = await merchantWithProgram(base, { signup: 'open', minimum_payout: 50 });
    const p = await signedInPartner(base, smtp, m.organizationId, m.program.id);
    const secrets = ['alice.customer@buyer.example', 'cus_SecretCustomer9f3a', 'bob@buyer.example'];
    await call(base, 'POST', '/api/customers', {
      headers: m.key,
      body: { customer_id: secrets[1], ref: p.slug, email: secrets[0] },
    });
    await call(base, 'POST', '/api/conversions', {
      headers: m.key,
      body: { external_id: unique('o'), amount: 50, customer_id: secrets[1] },
    });
    // A merchant whose customer ids are e-mails.
    await call(base, 'POST', '/api/customers', {
      headers: m.key,
      body: { customer_id: secrets[2], ref: p.slug, email: secrets[2] },
    });
    await call(base, 'POST', '/api/conversions', {
      headers: m.key,
      body: { external_id: unique('o'), amount: 80, customer_id: secrets[2] },
    });
    const now = new Date();
    const answers = await Promise.all(
      [
        'me',
        'customers',
        'commissions',
        'payouts',
        `stats?from=${new Date(now.getTime() - 7 * 86_400_000).toISOString()}&to=${new Date(now.getTime() + 86_400_000).toISOString()}`,
      ].map((path) => get(`/partner/api/${path}`, p.cookie)),
    );
    for (const answer of answers) expect(answer.status).toBe(200);
    const customers = answers[1].body.data.customers;
    expect(customers).toHaveLength(2);
    expect(customers.map((c: { customer: string }) => c.customer)).toEqual(
      expect.arrayContaining(['cus_…9f3a', expect.stringMatching(/^customer …[0-9a-f]{4}$/)]),
    );
    const text = JSON.stringify(answers.map((a) => a.body));
    for (const secret of [...secrets, 'buyer.example']) expect(text).not.toContain(secret);
    const commissions = answers[2].body.data.commissions;
    expect(commissions).toHaveLength(2);
    const stats = answers[4].body.data.points;
    expect(stats.reduce((n: number, p: { conversions: number }) => n + p.conversions, 0)).toBe(2);
    expect(stats.reduce((n: number, p: { signups: number }) => n + p.signups, 0)).toBe(2);
    // Both commissions pending (30-day hold): the next payout is due when their sum reaches the 50 minimum.
    const [balance] = answers[3].body.data.balances;
    expect(balance).toMatchObject({
      pending: 26,
      approved: 0,
      minimum_payout: 50,
      next_payout: { state: 'short', eligible: false, eligible_from: null, shortfall: 24 },
    });
  });

  it('asks for no amount when nothing is owed: commissions under review at a zero minimum, then everything paid', async () => {
    const m = await merchantWithProgram(base, { signup: 'open' });
    const p = await signedInPartner(base, smtp, m.organizationId, m.program.id);
    // The partner buys through their own link: self-referral, held for the merchant's review.
    const customer = unique('cus');
    await call(base, 'POST', '/api/customers', {
      headers: m.key,
      body: { customer_id: customer, ref: p.slug, email: p.email },
    });
    const sale = await call(base, 'POST', '/api/conversions', {
      headers: m.key,
      body: { external_id: unique('o'), amount: 50, customer_id: customer },
    });
    expect(sale.status).toBe(201);
    const held = (await get('/partner/api/payouts', p.cookie)).body.data.balances[0];
    expect(held).toMatchObject({
      on_hold: 10,
      pending: 0,
      approved: 0,
      minimum_payout: 0,
      next_payout: { state: 'nothing_owed', eligible: false, eligible_from: null, shortfall: 0 },
    });
    // Released, paid out, marked paid: nothing owed again, and still no "0.01 more" asked for.
    const [entry] = (await call(base, 'GET', `/api/commissions?affiliate_id=${p.affiliateId}`, { headers: m.key })).body
      .data.commissions;
    expect(
      (await call(base, 'POST', `/api/commissions/${entry.id}/approve`, { headers: m.key, body: {} })).status,
    ).toBe(200);
    const due = (await get('/partner/api/payouts', p.cookie)).body.data.balances[0];
    expect(due.next_payout).toEqual({ state: 'due', eligible: true, eligible_from: null, shortfall: 0 });
    const [payout] = (await call(base, 'POST', '/api/payouts', { headers: m.key, body: {} })).body.data.payouts;
    expect((await call(base, 'POST', `/api/payouts/${payout.id}/paid`, { headers: m.key, body: {} })).status).toBe(200);
    const paid = (await get('/partner/api/payouts', p.cookie)).body.data.balances[0];
    expect(paid).toMatchObject({ paid: 10, approved: 0, next_payout: { state: 'nothing_owed', shortfall: 0 } });
  });

  it('gives the date the pending commissions reach the minimum, builds links on the merchant site only, and keeps the payout e-mail', async () => {
    const m = await merchantWithProgram(base, { signup: 'open', minimum_payout: 15, hold_days: 10 });
    const p = await signedInPartner(base, smtp, m.organizationId, m.program.id);
    const occurred = new Date(Date.now() - 86_400_000);
    await call(base, 'POST', '/api/conversions', {
      headers: m.key,
      body: { external_id: unique('o'), amount: 50, ref: p.slug, occurred_at: occurred.toISOString() },
    });
    await call(base, 'POST', '/api/conversions', {
      headers: m.key,
      body: { external_id: unique('o'), amount: 50, ref: p.slug },
    });
    const { commissions } = (await get('/partner/api/commissions', p.cookie)).body.data;
    const approvesAt = commissions.map((c: { approves_at: string }) => c.approves_at).sort();
    expect(new Date(approvesAt[0]).getTime()).toBe(occurred.getTime() + 10 * 86_400_000);
    const [balance] = (await get('/partner/api/payouts', p.cookie)).body.data.balances;
    expect(balance.next_payout).toEqual({
      state: 'scheduled',
      eligible: false,
      eligible_from: approvesAt[1],
      shortfall: 0,
    });

    const link = await get(
      `/partner/api/link?program_id=${m.program.id}&url=${encodeURIComponent('https://blog.shop.example.com/post?x=1#top')}`,
      p.cookie,
    );
    expect(link.body.data.url).toBe(`https://blog.shop.example.com/post?x=1&ref=${p.slug}#top`);
    const elsewhere = await get(
      `/partner/api/link?program_id=${m.program.id}&url=${encodeURIComponent('https://evil.example/shop.example.com')}`,
      p.cookie,
    );
    expect(elsewhere).toMatchObject({ status: 400, body: { message: 'url: Must be a page of shop.example.com' } });

    expect(
      (
        await call(base, 'PATCH', '/partner/api/me', {
          headers: { cookie: p.cookie },
          body: { payout_email: 'x@partners.example' },
        })
      ).status,
    ).toBe(403);
    const updated = await call(base, 'PATCH', '/partner/api/me', {
      headers: fromPortal(base, p.cookie),
      body: { payout_email: 'Paypal@Partners.example' },
    });
    expect(updated.body.data.partner.payout_email).toBe('paypal@partners.example');
    const merchantView = await call(base, 'GET', `/api/affiliates/${p.affiliateId}`, { headers: m.key });
    expect(merchantView.body.data.affiliate.payout_email).toBe('paypal@partners.example');
  });
});
