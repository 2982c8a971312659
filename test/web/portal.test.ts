import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fromRepoRoot } from '../../server/src/paths.js';
import {
  describeInBrowser,
  html,
  launchChromium,
  readmeEmbedCode,
  startMerchantSite,
  svcCookie,
  type MerchantSite,
} from '../snippet/support/browser.js';
import {
  buildDashboard,
  DESKTOP,
  PHONE,
  screenshots,
  seriousViolations,
  sidewaysScrolling,
  signInOnPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession } from './support/people.js';
import { type MailedService, startServiceWithMail, unique } from './support/portal.js';
import { signInLinkOf, type SmtpReceiver } from './support/smtp.js';

/**
 * The partner portal in a real Chromium, against a real service on PostgreSQL whose e-mails go by
 * SMTP (nodemailer) to a real local SMTP server: a partner applies, the merchant approves in the
 * dashboard, the partner signs in through the e-mailed link, copies the referral link, a visitor
 * follows it to the merchant's page with the snippet and signs up, the merchant's backend records
 * a conversion, and the partner sees the commission pending with its approval date.
 *
 * The web app is built into a directory of this file's own (another file builds web/dist at the
 * same time). Screenshots of every portal page at 375 px and desktop widths go to
 * PORTAL_SCREENSHOTS (the README's come from docs/portal), else .tmp/portal-screenshots.
 */
const DIST = fromRepoRoot('.tmp/web-dist-portal-test');
const SHOTS = process.env.PORTAL_SCREENSHOTS ?? fromRepoRoot('.tmp/portal-screenshots');

let smtp: SmtpReceiver;
let service: MailedService;
let base: string;

beforeAll(async () => {
  buildDashboard(DIST);
  service = await startServiceWithMail({ MAIL_FROM: 'Acme partners <partners@acme.example>' }, { webDist: DIST });
  ({ smtp, baseUrl: base } = service);
}, 120_000);
afterAll(() => service?.close());

/** Nothing wider than the screen, a table's frame included (on a phone its rows are cards); no serious axe-core violation. */
async function checkPage(page: Page, name: string, problems: string[]): Promise<void> {
  for (const viewport of [PHONE, DESKTOP]) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(100);
    problems.push(...(await sidewaysScrolling(page)).map((p) => `${name} @${viewport.width}px: ${p}`));
  }
  problems.push(...(await seriousViolations(page)).map((v) => `${name}: ${v}`));
  await screenshots(page, SHOTS, name);
}

describeInBrowser('the partner portal in Chromium', () => {
  let browser: Browser;
  let site: MerchantSite;
  beforeAll(async () => {
    browser = await launchChromium();
    site = await startMerchantSite();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it(
    'apply to an approval program, get approved, sign in by the e-mailed link, share the link, a visitor signs up through the snippet and pays: the commission shows pending with its approval date',
    { timeout: 180_000 },
    async () => {
      const owner = await ownerSession(base, 'Acme Analytics');
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const program = (
        await call(base, 'POST', '/api/programs', {
          headers: key,
          body: {
            name: 'Acme Partners',
            commission_value: 30,
            hold_days: 30,
            minimum_payout: 50,
            signup: 'approval',
            website_url: `${site.origin}/`,
            terms:
              'Promote Acme honestly.\nNo paid search on our brand name.\nCommissions are paid monthly once approved.',
          },
        })
      ).body.data.program;
      // The merchant's landing page carries the snippet; its signup button tracks the trial.
      const customerId = `cus_${unique('Portal').replace(/-/g, '')}`;
      site.page(
        '/',
        html(
          `<h1>Acme Analytics</h1><button id="signup" onclick="svc('trial', '${customerId}').then(function (r) { document.getElementById('out').textContent = JSON.stringify(r); })">Start free trial</button><p id="out"></p>`,
          readmeEmbedCode(base, owner.organization.id),
        ),
      );

      const problems: string[] = [];
      const partnerContext = await browser.newContext({ viewport: DESKTOP, bypassCSP: true });
      await partnerContext.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      const partner = await partnerContext.newPage();
      const errors: string[] = [];
      partner.on('pageerror', (e) => errors.push(e.message));
      const slug = unique('jane').slice(0, 30);
      const email = `${slug}@partners.example`;

      await withFailureScreenshots(partner, 'portal', async () => {
        // 1. The join page: the slug is checked as it is typed; the terms are accepted.
        await partner.goto(`${base}/portal/${owner.organization.id}/join/${program.id}`);
        await partner.getByRole('heading', { name: 'Join Acme Partners' }).waitFor();
        await partner.getByLabel('Your name').fill('Jane Partner');
        await partner.getByLabel('E-mail', { exact: true }).fill(email);
        await partner.getByLabel('Referral slug').fill('Bad Slug');
        await partner.getByText('2 to 64 lowercase letters').waitFor();
        await partner.getByLabel('Referral slug').fill(slug);
        await partner.getByText(`✓ "${slug}" is available`).waitFor();
        await partner.getByLabel('Payout e-mail (PayPal or Wise)').fill(`paypal-${email}`);
        await checkPage(partner, 'join', problems);
        await partner.getByRole('button', { name: 'Apply' }).click();
        await partner.getByRole('alert').filter({ hasText: "You must accept the program's terms" }).waitFor();
        await partner.getByLabel("I accept the program's terms").check();
        await partner.getByRole('button', { name: 'Apply' }).click();
        await partner.getByRole('heading', { name: 'Application sent' }).waitFor();
        await checkPage(partner, 'applied', problems);
        const applied = await smtp.next(email);
        expect(applied.text).toContain("awaits the merchant's approval");

        // 2. The merchant approves the application in the dashboard.
        const merchant = await browser.newPage({ viewport: DESKTOP });
        await signInOnPage(merchant, base, owner.email);
        await merchant.goto(`${base}/dashboard/affiliates`);
        const row = merchant.getByRole('row', { name: /Jane Partner/ });
        await row.getByText('pending').waitFor();
        await row.getByRole('button', { name: 'Reject Jane Partner' }).waitFor();
        await row.getByRole('button', { name: 'Approve Jane Partner' }).click();
        await row.getByText('active').waitFor();
        expect((await smtp.next(email)).subject).toBe("You're approved: Acme Analytics's partner program");
        // The program's join link and terms, in the program form.
        await merchant.goto(`${base}/dashboard/programs`);
        await merchant.getByRole('button', { name: 'Edit Acme Partners' }).click();
        await merchant.getByText(`/portal/${owner.organization.id}/join/${program.id}`).waitFor();
        expect(await merchant.getByLabel('Program terms (partners accept them to join)').inputValue()).toContain(
          'No paid search',
        );
        await screenshots(merchant, SHOTS, 'dashboard-program-join-link');
        await merchant.close();

        // 3. The partner asks for a sign-in link; it arrives by SMTP; it signs them in once.
        await partner.goto(`${base}/portal/${owner.organization.id}`);
        await partner.getByRole('heading', { name: 'Sign in' }).waitFor();
        await partner.getByLabel('Your e-mail').fill(email);
        await partner.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
        await partner.getByRole('status').filter({ hasText: 'a sign-in link is on its way' }).waitFor();
        await checkPage(partner, 'sign-in', problems);
        const link = signInLinkOf(await smtp.next(email));
        await partner.goto(link.toString());
        await partner.getByRole('button', { name: 'Continue to the portal' }).click();
        await partner.getByRole('heading', { name: 'Hello, Jane Partner' }).waitFor();
        const cookie = (await partnerContext.cookies(`${base}/partner/api/me`)).find(
          (c) => c.name === 'svc.partner_session',
        )!;
        expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/partner/api' });
        expect(await partner.evaluate(() => document.cookie)).not.toContain('partner_session');

        // 4. Copy the referral link.
        await partner.getByRole('button', { name: 'Copy link' }).click();
        await partner.getByRole('button', { name: 'Copied' }).waitFor();
        const referral = await partner.evaluate(() => navigator.clipboard.readText());
        expect(referral).toBe(`${site.origin}/?ref=${slug}`);
        await partner.getByLabel(/Link to any page of/).fill(`${site.origin}/pricing`);
        await partner.getByRole('button', { name: 'Build link' }).click();
        expect(await partner.getByTestId('built-link').textContent()).toBe(`${site.origin}/pricing?ref=${slug}`);

        // 5. A visitor follows it to the merchant's page with the snippet, and signs up there: another
        // person's browser (on this machine, the same loopback address as the partner's sign-in, so
        // the same user agent too would be the partner referring themselves: self_referral).
        const visitorContext = await browser.newContext({
          userAgent:
            'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1',
        });
        const visitor = await visitorContext.newPage();
        await visitor.goto(referral);
        await expect
          .poll(async () => (await svcCookie(visitorContext, site.origin))?.value ?? '', { timeout: 10_000 })
          .toMatch(/^ck_/);
        await visitor.getByRole('button', { name: 'Start free trial' }).click();
        await expect.poll(() => visitor.locator('#out').textContent(), { timeout: 10_000 }).toContain('"ok":true');
        await visitorContext.close();

        // 6. The merchant's backend records the customer's first payment.
        const conversion = await call(base, 'POST', '/api/conversions', {
          headers: key,
          body: { external_id: unique('inv'), amount: 99, customer_id: customerId },
        });
        expect(conversion.status, JSON.stringify(conversion.body)).toBe(201);
        const commissions = await call(
          base,
          'GET',
          `/api/commissions?affiliate_id=${conversion.body.data.conversion.affiliate_id}`,
          { headers: key },
        );
        const approvesAt: string = commissions.body.data.commissions[0].approves_at;

        // 7. The partner sees it: one click, one signup, one conversion; the commission pending until its approval date.
        await partner.reload();
        const commissionRow = partner
          .getByRole('region', { name: 'Commissions' })
          .getByRole('row', { name: /pending/ });
        await commissionRow.waitFor();
        const approvalDate = await partner.evaluate(
          (at) => new Date(at).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' }),
          approvesAt,
        );
        expect(await commissionRow.textContent()).toContain('$29.70');
        expect(await commissionRow.textContent()).toContain(approvalDate);
        expect(await commissionRow.textContent()).toMatch(/cus_…[A-Za-z0-9]{4}/);
        expect(await commissionRow.textContent()).not.toContain(customerId);
        expect(await partner.locator('.kpi', { hasText: 'Clicks' }).textContent()).toBe('Clicks1');
        expect(await partner.locator('.kpi', { hasText: 'Signups' }).textContent()).toBe('Signups1');
        expect(await partner.locator('.kpi', { hasText: 'Conversions' }).textContent()).toBe('Conversions1');
        expect(await partner.getByTestId('next-payout').textContent()).toContain(
          '$20.30 more in commissions to reach the $50.00 minimum',
        );
        await checkPage(partner, 'home', problems);
        // On a phone the tables' rows are cards (the dashboard's DataTable), each cell with its column's label.
        await partner.setViewportSize(PHONE);
        const layouts = await partner.evaluate(() =>
          Array.from(document.querySelectorAll('.table-wrap')).map((wrap) => ({
            table: wrap.getAttribute('aria-label'),
            rows: Array.from(wrap.querySelectorAll('tbody tr')).map((tr) => getComputedStyle(tr).display),
            labelled: Array.from(wrap.querySelectorAll('tbody td')).every((td) => td.hasAttribute('data-label')),
          })),
        );
        expect(layouts).toEqual([
          { table: 'Commissions', rows: ['block'], labelled: true },
          { table: 'Customers', rows: ['block'], labelled: true },
        ]);
        expect(await partner.content()).not.toContain(customerId);

        // 8. The payout e-mail.
        await partner.getByLabel('Payout e-mail', { exact: true }).fill('jane-payouts@partners.example');
        await partner.getByRole('button', { name: 'Save' }).click();
        await partner.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
        const affiliate = await call(base, 'GET', `/api/affiliates/${conversion.body.data.conversion.affiliate_id}`, {
          headers: key,
        });
        expect(affiliate.body.data.affiliate.payout_email).toBe('jane-payouts@partners.example');

        // 9. Signed out, the link used: it does not sign in again.
        await partner.getByRole('button', { name: 'Sign out' }).click();
        await partner.getByRole('heading', { name: 'Sign in' }).waitFor();
        await partner.goto(link.toString());
        await partner.getByRole('button', { name: 'Continue to the portal' }).click();
        await partner.getByRole('alert').filter({ hasText: 'This sign-in link is not valid' }).waitFor();
        await checkPage(partner, 'used-link', problems);
        expect(problems).toEqual([]);
        expect(errors).toEqual([]);
      });
      await partnerContext.close();
    },
  );

  it('a closed program answers that it takes no applications', { timeout: 60_000 }, async () => {
    const owner = await ownerSession(base);
    const program = (
      await call(base, 'POST', '/api/programs', {
        headers: { authorization: owner.apiKey },
        body: { name: 'Invite only', commission_value: 10, signup: 'closed' },
      })
    ).body.data.program;
    const page = await browser.newPage({ viewport: PHONE });
    await withFailureScreenshots(page, 'portal-closed', async () => {
      await page.goto(`${base}/portal/${owner.organization.id}/join/${program.id}`);
      await page.getByRole('status').filter({ hasText: 'This program takes no applications' }).waitFor();
      expect(await page.getByRole('button', { name: 'Apply' }).count()).toBe(0);
    });
    await page.close();
  });
});
