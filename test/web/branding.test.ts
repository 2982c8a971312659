import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fromRepoRoot } from '../../server/src/paths.js';
import { describeInBrowser, launchChromium } from '../snippet/support/browser.js';
import {
  buildDashboard,
  DESKTOP,
  seriousViolations,
  sidewaysScrolling,
  signInOnPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession } from './support/people.js';
import { apply, type MailedService, startServiceWithMail, unique } from './support/portal.js';
import { signInLinkOf, type SmtpReceiver } from './support/smtp.js';

/**
 * The merchant's branding (issue 47, item 10), in Chromium against a real service with a local
 * SMTP server: the owner sets a logo, an accent colour and a sender name in the dashboard (each
 * validated, the message beside its field); the partner's e-mail comes from that name with the
 * logo and colour in its HTML part, and the portal shows the logo and the colour. Screenshots at
 * 1280 and 390 px go to BRANDING_SCREENSHOTS, else .tmp/branding-screenshots.
 */
const DIST = fromRepoRoot('.tmp/web-dist-branding');
const SHOTS = process.env.BRANDING_SCREENSHOTS ?? fromRepoRoot('.tmp/branding-screenshots');
const NARROW = { width: 390, height: 844 };
const LOGO = 'https://cdn.acme.example/brand/logo.png';
// A 1×1 PNG, answered for the logo's address (the test has no network).
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

let smtp: SmtpReceiver;
let service: MailedService;
let base: string;

beforeAll(async () => {
  buildDashboard(DIST);
  mkdirSync(SHOTS, { recursive: true });
  service = await startServiceWithMail({}, { webDist: DIST });
  ({ smtp, baseUrl: base } = service);
}, 120_000);
afterAll(() => service?.close());

async function shoot(page: Page, name: string): Promise<void> {
  const size = page.viewportSize() ?? DESKTOP;
  for (const [label, viewport] of [
    ['1280', DESKTOP],
    ['390', NARROW],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150);
    expect(await sidewaysScrolling(page), `${name} at ${label}px`).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/${name}-${label}.png`, fullPage: true });
  }
  await page.setViewportSize(size);
}

describeInBrowser('branding: logo, colour and sender name', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it(
    'set in the dashboard (validated), shown in the portal, and carried by e-mails to partners',
    { timeout: 150_000 },
    async () => {
      const owner = await ownerSession(base, 'Acme Tools');
      const key = { authorization: `Bearer ${owner.apiKey}` };
      // The API refuses what the rules forbid, naming the field.
      for (const [body, message] of [
        [{ logo_url: 'http://cdn.acme.example/logo.png' }, /^logo_url: Expected an https:\/\/ URL/],
        [{ brand_color: 'green' }, /^brand_color: Expected a colour as #rrggbb/],
        [
          { sender_name: 'Acme <billing@evil.example>' },
          /^sender_name: Expected a name without line breaks or angle brackets/,
        ],
        [{ sender_name: 'Acme\r\nBcc: someone@evil.example' }, /^sender_name: Expected a name without line breaks/],
      ] as const) {
        const refused = await call(base, 'PATCH', '/api/branding', { headers: key, body });
        expect(refused.status, JSON.stringify(refused.body)).toBe(400);
        expect(refused.body.message).toMatch(message);
      }
      expect((await call(base, 'GET', '/api/branding', { headers: key })).body.data.branding).toEqual({
        logo_url: null,
        brand_color: null,
        sender_name: null,
      });

      const merchant = await (await browser.newContext({ viewport: DESKTOP, bypassCSP: true })).newPage();
      await withFailureScreenshots(merchant, 'branding-dashboard', async () => {
        await signInOnPage(merchant, base, owner.email);
        await merchant.getByRole('link', { name: 'Branding' }).click();
        const form = merchant.getByRole('form', { name: 'Branding' });
        await form.getByLabel('Logo URL').fill('http://cdn.acme.example/logo.png');
        await form.getByRole('button', { name: 'Save' }).click();
        await form.getByText('Expected an https:// URL of an image', { exact: false }).waitFor();
        await form.getByLabel('Logo URL').fill(LOGO);
        await form.getByLabel('Accent colour').fill('#0A7C4A');
        await form.getByLabel('E-mail sender name').fill('Acme Partner Team');
        await form.getByRole('button', { name: 'Save' }).click();
        await merchant.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
        expect(await seriousViolations(merchant)).toEqual([]);
        await shoot(merchant, 'dashboard-branding');
      });
      expect((await call(base, 'GET', '/api/branding', { headers: key })).body.data.branding).toEqual({
        logo_url: LOGO,
        brand_color: '#0a7c4a',
        sender_name: 'Acme Partner Team',
      });

      // A partner joins: the welcome e-mail is the merchant's.
      const program = (
        await call(base, 'POST', '/api/programs', {
          headers: key,
          body: { name: 'Acme Friends', commission_value: 10, signup: 'open' },
        })
      ).body.data.program;
      const slug = unique('lena').slice(0, 30);
      const email = `${slug}@partners.example`;
      const applied = await apply(base, owner.organization.id, program.id, { name: 'Lena Partner', email, slug });
      expect(applied.status, JSON.stringify(applied.body)).toBe(201);
      const welcome = await smtp.next(email);
      expect(welcome.fromName).toBe('Acme Partner Team');
      expect(welcome.text).toContain('Welcome to Acme Tools');
      expect(welcome.html).toContain(`<img src="${LOGO}"`);
      expect(welcome.html).toContain('#0a7c4a');
      const link = signInLinkOf(welcome).toString();
      expect(welcome.html).toContain(`href="${link.replace(/&/g, '&amp;')}"`);

      const partner = await (await browser.newContext({ viewport: DESKTOP, bypassCSP: true })).newPage();
      await partner.route(LOGO, (route) => route.fulfill({ status: 200, contentType: 'image/png', body: PNG }));
      await withFailureScreenshots(partner, 'branding-portal', async () => {
        await partner.goto(link);
        await partner.getByRole('button', { name: 'Continue to the portal' }).click();
        await partner.getByRole('heading', { name: 'Hello, Lena Partner' }).waitFor();
        const logo = partner.getByTestId('brand-logo');
        expect(await logo.getAttribute('src')).toBe(LOGO);
        await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1);
        const header = partner.locator('header.portal-top');
        expect(await header.evaluate((el) => getComputedStyle(el).borderBottomColor)).toBe('rgb(10, 124, 74)');
        const copy = partner.getByRole('button', { name: 'Copy' }).first();
        expect(await copy.evaluate((el) => getComputedStyle(el).borderColor)).toBe('rgb(10, 124, 74)');
        expect(await seriousViolations(partner)).toEqual([]);
        await shoot(partner, 'portal-branded');
      });
    },
  );
});
