import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fromRepoRoot } from '../../server/src/paths.js';
import { describeInBrowser, launchChromium } from '../snippet/support/browser.js';
import {
  buildDashboard,
  DESKTOP,
  pageErrors,
  screenshots,
  sidewaysScrolling,
  signInOnPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession } from './support/people.js';
import { apply, type MailedService, startServiceWithMail, unique } from './support/portal.js';
import { signInLinkOf, type SmtpReceiver } from './support/smtp.js';

/**
 * Issue 47, item 7, in a real Chromium: the merchant changes a partner's slug on the affiliate's
 * page (the old one stays an alias, listed there), a slug another partner holds is refused with
 * the service's message, and the partner sees the new link and the alias in the portal. Both
 * pages at 390 px and 1280 px: nothing wider than the screen. Screenshots go to
 * SLUG_SCREENSHOTS, else .tmp/slug-screenshots.
 */
const DIST = fromRepoRoot('.tmp/web-dist-slug-test');
const SHOTS = process.env.SLUG_SCREENSHOTS ?? fromRepoRoot('.tmp/slug-screenshots');
const PHONE_390 = { width: 390, height: 844 };
const POLL = { timeout: 10_000 };

let smtp: SmtpReceiver;
let service: MailedService;
let base: string;
let browser: Browser;

beforeAll(async () => {
  buildDashboard(DIST);
  service = await startServiceWithMail({}, { webDist: DIST });
  ({ smtp, baseUrl: base } = service);
}, 120_000);
afterAll(() => service?.close());

const text = async (page: Page, selector: string) =>
  (await page.locator(selector).first().textContent())?.replace(/\s+/g, ' ').trim();

/** Nothing wider than the screen at 390 and 1280 px; screenshots of both. */
async function fitsBothWidths(page: Page, name: string): Promise<string[]> {
  const problems: string[] = [];
  for (const viewport of [PHONE_390, DESKTOP]) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150);
    problems.push(...(await sidewaysScrolling(page)).map((p) => `${name} @${viewport.width}px: ${p}`));
  }
  await screenshots(page, SHOTS, name);
  await page.setViewportSize(PHONE_390);
  await page.screenshot({ path: `${SHOTS}/${name}-390.png`, fullPage: true });
  await page.setViewportSize(DESKTOP);
  return problems;
}

describeInBrowser("a partner's slug and aliases in the dashboard and the portal", () => {
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  it(
    'the merchant changes the slug on the affiliate page, the old one listed as an alias; a taken one is refused; the partner sees both in the portal',
    { timeout: 120_000 },
    async () => {
      const owner = await ownerSession(base);
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const program = (
        await call(base, 'POST', '/api/programs', {
          headers: key,
          body: { name: 'Main', commission_value: 20, signup: 'open', website_url: 'https://shop.example.com/' },
        })
      ).body.data.program;
      const slug = unique('jane');
      const email = `${slug}@partners.example`;
      expect((await apply(base, owner.organization.id, program.id, { name: 'Jane Partner', email, slug })).status).toBe(
        201,
      );
      const taken = unique('taken');
      expect(
        (
          await call(base, 'POST', '/api/affiliates', {
            headers: key,
            body: { email: 'other@example.com', program_id: program.id, slug: taken },
          })
        ).status,
      ).toBe(201);
      const jane = (await call(base, 'GET', `/api/affiliates?email=${encodeURIComponent(email)}`, { headers: key }))
        .body.data.affiliates[0];

      const merchant = await (await browser.newContext({ viewport: DESKTOP })).newPage();
      const errors = pageErrors(merchant);
      const problems: string[] = [];
      await withFailureScreenshots(merchant, 'slug-change', async () => {
        await signInOnPage(merchant, base, owner.email);
        await merchant.goto(`${base}/dashboard/affiliates/${jane.id}`);
        await merchant.getByRole('heading', { name: 'Jane Partner' }).waitFor();
        await expect
          .poll(() => text(merchant, '[data-testid="referral-link"]'), POLL)
          .toBe(`https://shop.example.com/?ref=${slug}`);

        // A slug another partner holds: the service's 409, shown by the field; nothing changes.
        await merchant.getByRole('button', { name: 'Change the slug' }).click();
        await merchant.getByLabel('New slug').fill(taken);
        await merchant.getByRole('button', { name: 'Save slug' }).click();
        await merchant.getByText(`"${taken}" is already taken`).first().waitFor();
        problems.push(...(await fitsBothWidths(merchant, 'slug-taken')));

        await merchant.getByLabel('New slug').fill(`${slug}-new`);
        await merchant.getByRole('button', { name: 'Save slug' }).click();
        await expect
          .poll(() => text(merchant, '[data-testid="referral-link"]'), POLL)
          .toBe(`https://shop.example.com/?ref=${slug}-new`);
        await expect.poll(() => text(merchant, '[data-testid="aliases"]'), POLL).toContain(`?ref=${slug}`);
        // Still so after a reload: from the service, not the page's memory.
        await merchant.reload();
        await expect.poll(() => text(merchant, '[data-testid="aliases"]'), POLL).toContain(`?ref=${slug}`);
        problems.push(...(await fitsBothWidths(merchant, 'slug-changed')));
      });
      expect(errors).toEqual([]);

      const partner = await (await browser.newContext({ viewport: DESKTOP })).newPage();
      await withFailureScreenshots(partner, 'slug-portal', async () => {
        const welcome = signInLinkOf(await smtp.next(email));
        await partner.goto(welcome.toString());
        await partner.getByRole('button', { name: 'Continue to the portal' }).click();
        await partner.getByRole('heading', { name: 'Hello, Jane Partner' }).waitFor();
        await expect
          .poll(() => text(partner, '[data-testid="referral-link"]'), POLL)
          .toBe(`https://shop.example.com/?ref=${slug}-new`);
        await expect.poll(() => text(partner, '[data-testid="aliases"]'), POLL).toContain(`?ref=${slug}`);
        problems.push(...(await fitsBothWidths(partner, 'portal-aliases')));
      });
      expect(problems).toEqual([]);
    },
  );
});
