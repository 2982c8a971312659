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
import { affiliateIdOf, apply, type MailedService, startServiceWithMail, unique } from './support/portal.js';
import { signInLinkOf, type SmtpReceiver } from './support/smtp.js';

/**
 * Setup hints instead of operator errors (issue 47, item 11), in Chromium against a service set up
 * the way a first install is: no ENCRYPTION_KEY, no Stripe Connect. What cannot work is not
 * offered; the merchant is told what to set, the partner what to do meanwhile. Screenshots at 1280
 * and 390 px go to SETUP_HINTS_SCREENSHOTS, else .tmp/setup-hints-screenshots.
 */
const DIST = fromRepoRoot('.tmp/web-dist-setup-hints');
const SHOTS = process.env.SETUP_HINTS_SCREENSHOTS ?? fromRepoRoot('.tmp/setup-hints-screenshots');
const NARROW = { width: 390, height: 844 };

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

/** An owner, a program that requires a tax form, and a partner who joined it (their welcome e-mail). */
async function merchantWithPartner(name: string) {
  const owner = await ownerSession(base, 'Acme Tools');
  const key = { authorization: `Bearer ${owner.apiKey}` };
  const program = (
    await call(base, 'POST', '/api/programs', {
      headers: key,
      body: { name: 'Acme Friends', commission_value: 10, signup: 'open', require_tax_form: true },
    })
  ).body.data.program;
  const slug = unique(name.toLowerCase()).slice(0, 30);
  const email = `${slug}@partners.example`;
  const applied = await apply(base, owner.organization.id, program.id, { name: `${name} Partner`, email, slug });
  expect(applied.status, JSON.stringify(applied.body)).toBe(201);
  const affiliateId = await affiliateIdOf(base, key, email);
  return { owner, key, program, email, affiliateId, welcome: await smtp.next(email) };
}

const UPLOADS_OFF =
  'This merchant does not accept tax forms online yet: they must first set up encrypted storage for documents (ENCRYPTION_KEY on their affiliate service). Send them your form another way, or upload it here once they have.';

describeInBrowser('setup hints on a service without ENCRYPTION_KEY or Stripe Connect', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it(
    'tax forms: the portal offers no upload and says what to do; the API answers 409 naming what the merchant must do; the affiliate page tells the merchant what to set',
    { timeout: 120_000 },
    async () => {
      const m = await merchantWithPartner('Rosa');
      const partner = await (await browser.newContext({ viewport: DESKTOP, bypassCSP: true })).newPage();
      await withFailureScreenshots(partner, 'setup-hints-portal-tax-form', async () => {
        await partner.goto(signInLinkOf(m.welcome).toString());
        await partner.getByRole('button', { name: 'Continue to the portal' }).click();
        await partner.getByRole('heading', { name: 'Hello, Rosa Partner' }).waitFor();
        // The hold at the top does not send them to an upload that is not there.
        await partner
          .getByTestId('payout-holds')
          .getByText(
            'Acme Friends pays you once your tax form is accepted, and does not accept tax forms online yet: send it to the merchant another way.',
          )
          .waitFor();
        const card = partner.getByTestId('tax-form');
        await card
          .getByTestId('tax-form-uploads-off')
          .getByText(
            'Acme Tools does not accept tax forms online yet: they must first set up encrypted storage for documents.',
            { exact: false },
          )
          .waitFor();
        expect(await card.getByRole('form', { name: 'Upload a tax form' }).count()).toBe(0);
        expect(await card.getByRole('button', { name: 'Upload' }).count()).toBe(0);
        expect(await card.textContent()).not.toContain('operator');
        // The API, asked all the same (from the portal's own origin, with the partner's session).
        const answer = await partner.evaluate(async () => {
          const res = await fetch('/partner/api/tax-form', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ kind: 'w9', file_name: 'w9.pdf', content_base64: btoa('%PDF-1.7\n%%EOF\n') }),
          });
          return { status: res.status, body: await res.json() };
        });
        expect(answer).toEqual({ status: 409, body: { success: false, message: UPLOADS_OFF } });
        expect(await seriousViolations(partner)).toEqual([]);
        await shoot(partner, 'portal-tax-form-uploads-off');
      });

      const merchant = await (await browser.newContext({ viewport: DESKTOP, bypassCSP: true })).newPage();
      await withFailureScreenshots(merchant, 'setup-hints-dashboard-tax-form', async () => {
        await signInOnPage(merchant, base, m.owner.email);
        await merchant.goto(`${base}/dashboard/affiliates/${m.affiliateId}`);
        await merchant
          .getByTestId('tax-form')
          .getByTestId('tax-form-uploads-off')
          .getByText('Partners cannot upload tax forms yet', { exact: false })
          .waitFor();
        expect(await merchant.getByTestId('tax-form-uploads-off').textContent()).toContain('ENCRYPTION_KEY');
        expect(await seriousViolations(merchant)).toEqual([]);
        await shoot(merchant, 'dashboard-tax-form-uploads-off');
      });
    },
  );

  it(
    'Stripe Connect not set up: the affiliate page offers no "Connect with Stripe" and says what to configure; once set up, it does',
    { timeout: 120_000 },
    async () => {
      const m = await merchantWithPartner('Sam');
      const merchant = await (await browser.newContext({ viewport: DESKTOP, bypassCSP: true })).newPage();
      await withFailureScreenshots(merchant, 'setup-hints-stripe-connect', async () => {
        await signInOnPage(merchant, base, m.owner.email);
        await merchant.goto(`${base}/dashboard/affiliates/${m.affiliateId}`);
        const hint = merchant.getByTestId('stripe-connect-not-set-up');
        await hint.getByText('Stripe Connect is not set up.', { exact: false }).waitFor();
        expect(await hint.textContent()).toContain('secret key');
        expect(await merchant.getByRole('button', { name: 'Connect with Stripe' }).count()).toBe(0);
        expect(await seriousViolations(merchant)).toEqual([]);
        await shoot(merchant, 'dashboard-stripe-connect-not-set-up');
        await hint.getByRole('link', { name: 'Integrations' }).click();
        await merchant.waitForURL('**/dashboard/integrations');

        const put = await call(base, 'PUT', '/api/integrations/stripe_connect', {
          headers: m.key,
          body: { secret_key: 'sk_test_setuphints123' },
        });
        expect(put.status, JSON.stringify(put.body)).toBe(200);
        await merchant.goto(`${base}/dashboard/affiliates/${m.affiliateId}`);
        await merchant.getByRole('button', { name: 'Connect with Stripe' }).waitFor();
        expect(await merchant.getByTestId('stripe-connect-not-set-up').count()).toBe(0);
      });
    },
  );
});
