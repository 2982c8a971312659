import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fromRepoRoot } from '../../server/src/paths.js';
import { describeInBrowser, launchChromium } from '../snippet/support/browser.js';
import { buildDashboard, DESKTOP, signInOnPage, withFailureScreenshots } from './support/dashboard.js';
import { call, ownerSession } from './support/people.js';
import { apply, type MailedService, startServiceWithMail, unique } from './support/portal.js';
import { signInLinkOf, type SmtpReceiver } from './support/smtp.js';

/**
 * What a partner sees in the portal, in Chromium, against a real service whose e-mails go by SMTP:
 * the figure "earned" (the same as the dashboard's), the link of a program without a website, the
 * sign-in link's page (first use and a used link), the join page without terms, the payout e-mail
 * field, and a quiet console when signed out. Screenshots at 1280 and 390 px go to
 * PORTAL_SCREENSHOTS, else .tmp/portal-partner-screenshots.
 */
const DIST = fromRepoRoot('.tmp/web-dist-portal-partner-test');
const SHOTS = process.env.PORTAL_SCREENSHOTS ?? fromRepoRoot('.tmp/portal-partner-screenshots');
const WIDE = DESKTOP;
const NARROW = { width: 390, height: 844 };

let smtp: SmtpReceiver;
let service: MailedService;
let base: string;

beforeAll(async () => {
  buildDashboard(DIST);
  service = await startServiceWithMail({}, { webDist: DIST });
  ({ smtp, baseUrl: base } = service);
}, 120_000);
afterAll(() => service?.close());

async function shoot(page: Page, name: string): Promise<void> {
  const size = page.viewportSize() ?? WIDE;
  for (const [label, viewport] of [
    ['1280', WIDE],
    ['390', NARROW],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150);
    await page.screenshot({ path: `${SHOTS}/${name}-${label}.png`, fullPage: true });
  }
  await page.setViewportSize(size);
}

/** Console messages of type error or warning, and failed responses, of a page. */
function consoleOf(page: Page): string[] {
  const messages: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') messages.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => messages.push(`pageerror: ${e.message}`));
  return messages;
}

/** A customer of `slug` who pays `amount`; the conversion's id. */
async function sale(key: Record<string, string>, slug: string, amount: number, email?: string): Promise<string> {
  const customerId = `cus_${unique('c').replace(/-/g, '')}`;
  expect(
    (
      await call(base, 'POST', '/api/customers', {
        headers: key,
        body: { customer_id: customerId, ref: slug, ...(email ? { email } : {}) },
      })
    ).status,
  ).toBe(201);
  const conversion = await call(base, 'POST', '/api/conversions', {
    headers: key,
    body: { external_id: unique('inv'), amount, customer_id: customerId },
  });
  expect(conversion.status, JSON.stringify(conversion.body)).toBe(201);
  return conversion.body.data.conversion.id;
}

describeInBrowser('the partner portal, as a partner sees it', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it(
    'a first sign-in says no "Welcome back"; a program without a website offers its ?ref= to copy; Earned is 10 for a 100 sale and a refunded 300 sale at 10 %, as the dashboard says; the payout e-mail shows whole; a used link offers only a new one',
    { timeout: 180_000 },
    async () => {
      const owner = await ownerSession(base, 'Acme Tools');
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const program = (
        await call(base, 'POST', '/api/programs', {
          headers: key,
          body: { name: 'Acme Friends', commission_value: 10, signup: 'open' },
        })
      ).body.data.program;
      const slug = unique('ravi').slice(0, 30);
      const email = `${slug}@partners.example`;
      const applied = await apply(base, owner.organization.id, program.id, { name: 'Ravi Partner', email, slug });
      expect(applied.status, JSON.stringify(applied.body)).toBe(201);
      const welcome = await smtp.next(email);
      // The welcome e-mail of an open program gives the link that works without a website.
      expect(welcome.text).toContain(`?ref=${slug}`);
      await sale(key, slug, 100);
      const refunded = await sale(key, slug, 300);
      expect((await call(base, 'POST', `/api/conversions/${refunded}/refund`, { headers: key, body: {} })).status).toBe(
        200,
      );
      await sale(key, slug, 200, email); // the partner's own e-mail: self_referral holds it

      const context = await browser.newContext({ viewport: WIDE });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      const page = await context.newPage();
      const messages = consoleOf(page);
      await withFailureScreenshots(page, 'portal-partner', async () => {
        // A first sign-in: no "Welcome back".
        const link = signInLinkOf(welcome);
        await page.goto(link.toString());
        await page.getByRole('heading', { name: 'Sign in to your partner portal' }).waitFor();
        expect(await page.getByText('Welcome back').count()).toBe(0);
        await shoot(page, 'sign-in-link');
        await page.getByRole('button', { name: 'Continue to the portal' }).click();
        await page.getByRole('heading', { name: 'Hello, Ravi Partner' }).waitFor();

        // No website: the ?ref= parameter, copied whole.
        await page.getByRole('button', { name: 'Copy', exact: true }).click();
        await page.getByRole('button', { name: 'Copied' }).waitFor();
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`?ref=${slug}`);

        // Earned: the service's figure; the held commission apart.
        const kpi = (label: string) =>
          page
            .locator('.kpi', { has: page.locator('.label', { hasText: new RegExp(`^${label}$`) }) })
            .locator('.value');
        await expect.poll(() => kpi('Earned').textContent(), { timeout: 10_000 }).toBe('$10.00');
        expect(await kpi('Under review').textContent()).toBe('$20.00');
        expect(await kpi('Conversions').textContent()).toBe('3');

        // The payout e-mail shows whole at desktop width.
        const longAddress = 'ravi.partner.payouts+affiliate-earnings@partners-payments.example';
        const field = page.getByLabel('Payout e-mail', { exact: true });
        await field.fill(longAddress);
        expect(await field.evaluate((input: HTMLInputElement) => input.scrollWidth <= input.clientWidth)).toBe(true);
        await page.getByRole('button', { name: 'Save' }).click();
        await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
        await shoot(page, 'home-no-website');

        // The dashboard's figure for the same affiliate and period is the same.
        const merchant = await browser.newPage({ viewport: WIDE });
        await signInOnPage(merchant, base, owner.email);
        await merchant.goto(`${base}/dashboard/affiliates`);
        const figures = merchant.getByRole('row', { name: /Ravi Partner/ }).locator('td.figures-cell');
        await expect.poll(() => figures.textContent(), { timeout: 10_000 }).toContain('Earned$10.00');
        await merchant.close();

        // Signed out, the used link: what went wrong and a new link, neither "Welcome back" nor "Continue".
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        await page.goto(link.toString());
        await page.getByRole('button', { name: 'Continue to the portal' }).click();
        await page.getByRole('heading', { name: 'This sign-in link no longer works' }).waitFor();
        await page.getByRole('alert').filter({ hasText: 'This sign-in link is not valid' }).waitFor();
        expect(await page.getByText('Welcome back').count()).toBe(0);
        expect(await page.getByRole('button', { name: 'Continue to the portal' }).count()).toBe(0);
        await page.getByRole('link', { name: 'Ask for a new link' }).waitFor();
        await shoot(page, 'used-link');
      });
      // The used link's 401 is the answer the page shows; nothing else went wrong.
      expect(messages.filter((m) => !m.includes('401'))).toEqual([]);
      await context.close();
    },
  );

  it(
    'signed out, the portal page shows the sign-in form and logs nothing in the console',
    { timeout: 60_000 },
    async () => {
      const owner = await ownerSession(base);
      const page = await browser.newPage({ viewport: WIDE });
      const messages = consoleOf(page);
      const failed: string[] = [];
      page.on('response', (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
      });
      await withFailureScreenshots(page, 'portal-signed-out', async () => {
        await page.goto(`${base}/portal/${owner.organization.id}`);
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        await page.getByLabel('Your e-mail').waitFor();
        await page.waitForLoadState('networkidle');
      });
      expect(messages).toEqual([]);
      expect(failed).toEqual([]);
      await page.close();
    },
  );

  it(
    'the join page of a program without terms asks for no terms; with terms, it does',
    { timeout: 60_000 },
    async () => {
      const owner = await ownerSession(base);
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const plain = (
        await call(base, 'POST', '/api/programs', {
          headers: key,
          body: { name: 'No Terms', commission_value: 15, signup: 'open', website_url: 'https://tools.example/' },
        })
      ).body.data.program;
      const page = await browser.newPage({ viewport: WIDE });
      const messages = consoleOf(page);
      await withFailureScreenshots(page, 'portal-join-no-terms', async () => {
        await page.goto(`${base}/portal/${owner.organization.id}/join/${plain.id}`);
        await page.getByRole('heading', { name: 'Join No Terms' }).waitFor();
        expect(await page.getByRole('checkbox').count()).toBe(0);
        expect(await page.getByText("I accept the program's terms").count()).toBe(0);
        expect(await page.getByRole('heading', { name: 'Program terms' }).count()).toBe(0);
        const slug = unique('tess').slice(0, 30);
        await page.getByLabel('Your name').fill('Tess');
        await page.getByLabel('E-mail', { exact: true }).fill(`${slug}@partners.example`);
        await page.getByLabel('Referral slug').fill(slug);
        await shoot(page, 'join-no-terms');
        await page.getByRole('button', { name: 'Join the program' }).click();
        await page.getByRole('heading', { name: "You're in" }).waitFor();
        const mail = await smtp.next(`${slug}@partners.example`);
        expect(mail.text).toContain(`Your referral link: https://tools.example/?ref=${slug}`);

        const withTerms = (
          await call(base, 'POST', '/api/programs', {
            headers: key,
            body: { name: 'With Terms', commission_value: 15, signup: 'open', terms: 'Be honest.' },
          })
        ).body.data.program;
        await page.goto(`${base}/portal/${owner.organization.id}/join/${withTerms.id}`);
        await page.getByRole('heading', { name: 'Join With Terms' }).waitFor();
        await page.getByLabel("I accept the program's terms").waitFor();
      });
      expect(messages).toEqual([]);
      await page.close();
    },
  );
});
