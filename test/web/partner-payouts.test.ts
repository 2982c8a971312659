import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fromRepoRoot } from '../../server/src/paths.js';
import { describeInBrowser, launchChromium } from '../snippet/support/browser.js';
import { TEST_ENCRYPTION_KEY } from '../support/server.js';
import { StripeConnectStandIn } from '../support/stripe-connect-standin.js';
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
 * Tax forms and Stripe Connect onboarding in Chromium, both sides (shared/spec/payout-rails.md): a program that requires an
 * accepted form holds a partner's payout; the partner sees why in the portal and uploads a form;
 * the owner sees "Payout held: tax form submitted" on the affiliate page, rejects it with a reason
 * the partner then reads, and accepts the corrected one, which releases the payout. Screenshots at
 * 1280 and 390 px go to TAX_FORM_SCREENSHOTS, else .tmp/tax-form-screenshots.
 */
const DIST = fromRepoRoot('.tmp/web-dist-tax-forms-test');
const SHOTS = process.env.TAX_FORM_SCREENSHOTS ?? fromRepoRoot('.tmp/tax-form-screenshots');
const NARROW = { width: 390, height: 844 };
const PDF = Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\nW-9 of a partner\n%%EOF\n');

let smtp: SmtpReceiver;
let service: MailedService;
let base: string;

beforeAll(async () => {
  buildDashboard(DIST);
  mkdirSync(SHOTS, { recursive: true });
  service = await startServiceWithMail({ ENCRYPTION_KEY: TEST_ENCRYPTION_KEY }, { webDist: DIST });
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

describeInBrowser('tax forms, as the partner and the merchant see them', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it(
    'the portal says why payouts are held and takes the form; the owner rejects it with a reason, then accepts the new one, and the payout is created',
    { timeout: 180_000 },
    async () => {
      const owner = await ownerSession(base, 'Acme Tools');
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const program = (
        await call(base, 'POST', '/api/programs', {
          headers: key,
          body: { name: 'Acme Friends', commission_value: 10, signup: 'open', require_tax_form: true },
        })
      ).body.data.program;
      const slug = unique('rosa').slice(0, 30);
      const email = `${slug}@partners.example`;
      const applied = await apply(base, owner.organization.id, program.id, { name: 'Rosa Partner', email, slug });
      expect(applied.status, JSON.stringify(applied.body)).toBe(201);
      const affiliateId = await affiliateIdOf(base, key, email);
      const welcome = await smtp.next(email);
      expect(
        (
          await call(base, 'POST', '/api/commissions', {
            headers: key,
            body: { affiliate_id: affiliateId, amount: 40, description: 'Launch bonus' },
          })
        ).status,
      ).toBe(201);
      const held = await call(base, 'POST', '/api/payouts', { headers: key, body: {} });
      expect(held.body.data).toMatchObject({
        payouts: [],
        held: [{ affiliate_id: affiliateId, reason: 'tax_form_missing' }],
      });

      // CSP bypassed for axe-core's injected script only (seriousViolations).
      const partner = await (await browser.newContext({ viewport: DESKTOP, bypassCSP: true })).newPage();
      const merchant = await (await browser.newContext({ viewport: DESKTOP, bypassCSP: true })).newPage();
      await withFailureScreenshots(partner, 'tax-form-portal', async () => {
        await partner.goto(signInLinkOf(welcome).toString());
        await partner.getByRole('button', { name: 'Continue to the portal' }).click();
        await partner.getByRole('heading', { name: 'Hello, Rosa Partner' }).waitFor();
        // Why the payout waits, at the top, and what to do.
        const holds = partner.getByTestId('payout-holds');
        await holds.getByText('Your payouts are held.').waitFor();
        await holds
          .getByText(
            'Acme Friends pays you once your tax form is accepted: upload a W-9 (US persons) or a W-8BEN / W-8BEN-E (outside the US).',
          )
          .waitFor();
        // The balance card does not promise the next payout: it says what holds it.
        await partner
          .getByTestId('next-payout')
          .getByText('Acme Friends pays you once your tax form is accepted', { exact: false })
          .waitFor();
        const card = partner.getByTestId('tax-form');
        await card.getByText('No tax form on file.').waitFor();
        await shoot(partner, 'portal-held-missing');

        // Not a PDF, PNG or JPEG: refused beside the field.
        await card
          .getByLabel('Signed form (PDF, PNG or JPEG, at most 10 MB)')
          .setInputFiles({ name: 'notes.pdf', mimeType: 'application/pdf', buffer: Buffer.from('just text') });
        await card.getByRole('button', { name: 'Upload' }).click();
        await card.getByText('not a PDF, PNG or JPEG file').waitFor();

        await card.getByLabel('Which form').selectOption('w9');
        await card
          .getByLabel('Signed form (PDF, PNG or JPEG, at most 10 MB)')
          .setInputFiles({ name: 'w9-rosa.pdf', mimeType: 'application/pdf', buffer: PDF });
        await card.getByRole('button', { name: 'Upload' }).click();
        await partner.getByRole('status').filter({ hasText: 'Sent: the merchant reviews your form.' }).waitFor();
        await card.getByText('submitted', { exact: true }).waitFor();
        await holds
          .getByText(
            "Your tax form is waiting for the merchant's review: payouts in Acme Friends are held until it is accepted.",
          )
          .waitFor();
        expect(await seriousViolations(partner)).toEqual([]);
        await shoot(partner, 'portal-submitted');
      });

      await withFailureScreenshots(merchant, 'tax-form-dashboard', async () => {
        await signInOnPage(merchant, base, owner.email);
        await merchant.goto(`${base}/dashboard/affiliates/${affiliateId}`);
        const form = merchant.getByTestId('tax-form');
        await form.getByTestId('payout-hold').getByText('Payout held: tax form submitted').waitFor();
        // The document, decrypted, as uploaded.
        const href = await form.getByRole('link', { name: 'Download document' }).getAttribute('href');
        const document = await merchant.request.get(`${base}${href}`);
        expect(document.status()).toBe(200);
        expect(document.headers()['content-type']).toBe('application/pdf');
        expect(Buffer.from(await document.body()).equals(PDF)).toBe(true);
        expect(await seriousViolations(merchant)).toEqual([]);
        await shoot(merchant, 'dashboard-submitted');

        await form.getByRole('button', { name: 'Reject…' }).click();
        await form.getByLabel('Why (the partner reads it)').fill('The form is not signed');
        await shoot(merchant, 'dashboard-rejecting');
        await form.getByRole('button', { name: 'Reject', exact: true }).click();
        await form.getByText('Rejected: The form is not signed').waitFor();
        await form.getByTestId('payout-hold').getByText('Payout held: tax form rejected').waitFor();
      });

      await withFailureScreenshots(partner, 'tax-form-portal-rejected', async () => {
        await partner.reload();
        const card = partner.getByTestId('tax-form');
        await card.getByTestId('rejection-reason').getByText('The form is not signed').waitFor();
        await partner
          .getByTestId('payout-holds')
          .getByText(
            'Your tax form was rejected (The form is not signed): upload a corrected one. Payouts in Acme Friends are held until it is accepted.',
          )
          .waitFor();
        await shoot(partner, 'portal-rejected');
        await card
          .getByLabel('Signed form (PDF, PNG or JPEG, at most 10 MB)')
          .setInputFiles({ name: 'w9-rosa-signed.pdf', mimeType: 'application/pdf', buffer: PDF });
        await card.getByRole('button', { name: 'Upload a new form' }).click();
        await card.getByText('submitted', { exact: true }).waitFor();
      });

      await withFailureScreenshots(merchant, 'tax-form-dashboard-accept', async () => {
        await merchant.reload();
        const form = merchant.getByTestId('tax-form');
        await form.getByRole('button', { name: 'Accept' }).click();
        await form.getByText('accepted', { exact: true }).waitFor();
        await expect.poll(() => form.getByTestId('payout-hold').count()).toBe(0);
        await shoot(merchant, 'dashboard-accepted');
      });

      const paid = await call(base, 'POST', '/api/payouts', { headers: key, body: {} });
      expect(paid.body.data).toMatchObject({ payouts: [{ affiliate_id: affiliateId, amount: 40 }], held: [] });
      await partner.reload();
      await partner.getByTestId('tax-form').getByText('accepted', { exact: true }).waitFor();
      expect(await partner.getByTestId('payout-holds').count()).toBe(0);
      await shoot(partner, 'portal-accepted');
      await partner.context().close();
      await merchant.context().close();
    },
  );
});

describeInBrowser('Stripe Connect onboarding, as the partner and the merchant see it', () => {
  let browser: Browser;
  let stripe: StripeConnectStandIn;
  const saved = process.env.STRIPE_API_BASE_URL;
  beforeAll(async () => {
    browser = await launchChromium();
    stripe = await new StripeConnectStandIn().start();
    process.env.STRIPE_API_BASE_URL = stripe.baseUrl;
  }, 60_000);
  afterAll(async () => {
    if (saved === undefined) delete process.env.STRIPE_API_BASE_URL;
    else process.env.STRIPE_API_BASE_URL = saved;
    await stripe?.stop();
    await browser?.close();
  });

  it(
    'the partner connects with Stripe from the portal, comes back and chooses Stripe; the merchant sees the account and makes a new link',
    { timeout: 180_000 },
    async () => {
      const owner = await ownerSession(base, 'Acme Tools');
      const key = { authorization: `Bearer ${owner.apiKey}` };
      expect(
        (
          await call(base, 'PUT', '/api/integrations/stripe_connect', {
            headers: key,
            body: { secret_key: stripe.secretKey },
          })
        ).status,
      ).toBe(200);
      const program = (
        await call(base, 'POST', '/api/programs', {
          headers: key,
          body: { name: 'Acme Friends', commission_value: 10, signup: 'open' },
        })
      ).body.data.program;
      const slug = unique('sam').slice(0, 30);
      const email = `${slug}@partners.example`;
      const applied = await apply(base, owner.organization.id, program.id, { name: 'Sam Partner', email, slug });
      expect(applied.status, JSON.stringify(applied.body)).toBe(201);
      const affiliateId = await affiliateIdOf(base, key, email);
      const welcome = await smtp.next(email);

      const partner = await (await browser.newContext({ viewport: DESKTOP, bypassCSP: true })).newPage();
      // Stripe's hosted onboarding is Stripe's: the stand-in's link opens a page of our own here.
      await partner.route('https://connect.stripe.com/**', (route) =>
        route.fulfill({
          status: 200,
          contentType: 'text/html',
          body: '<title>Stripe onboarding</title><h1>Stripe onboarding</h1>',
        }),
      );
      await withFailureScreenshots(partner, 'stripe-portal', async () => {
        await partner.goto(signInLinkOf(welcome).toString());
        await partner.getByRole('button', { name: 'Continue to the portal' }).click();
        const card = partner.getByTestId('payout-method');
        await card.getByRole('heading', { name: 'How you are paid' }).waitFor();
        await card.getByLabel('Stripe (a bank account through Stripe)').check();
        await shoot(partner, 'portal-payout-method');
        await card.getByRole('button', { name: 'Connect with Stripe' }).click();
        await partner.waitForURL(/^https:\/\/connect\.stripe\.com\/setup\/e\/acct_/);
        const account = [...stripe.accounts.values()].find((a) => a.email === email)!;
        expect(account).toMatchObject({ type: 'express', capabilities: { transfers: 'inactive' } });
        stripe.completeOnboarding(account.id);

        // Stripe brings the partner back (return_url): Stripe is chosen, saved.
        await partner.goto(`${base}/portal/${owner.organization.id}?stripe_onboarding=return`);
        await card.getByText('Back from Stripe: your account is connected.').waitFor();
        expect(await card.getByLabel('Stripe (a bank account through Stripe)').isChecked()).toBe(true);
        await card.getByRole('button', { name: 'Save', exact: true }).click();
        await card.getByText('Saved: you are paid by Stripe (a bank account through Stripe).').waitFor();
        expect(await seriousViolations(partner)).toEqual([]);
        await shoot(partner, 'portal-stripe-connected');
        const affiliate = (await call(base, 'GET', `/api/affiliates/${affiliateId}`, { headers: key })).body.data
          .affiliate;
        expect(affiliate).toMatchObject({ payout_method: 'stripe', stripe_account_id: account.id });
      });

      const merchant = await (await browser.newContext({ viewport: DESKTOP, bypassCSP: true })).newPage();
      await withFailureScreenshots(merchant, 'stripe-dashboard', async () => {
        await signInOnPage(merchant, base, owner.email);
        await merchant.goto(`${base}/dashboard/affiliates/${affiliateId}`);
        const row = merchant.getByTestId('stripe-onboarding');
        await row.getByText(/^acct_/).waitFor();
        await row.getByRole('button', { name: 'New onboarding link' }).click();
        await row
          .getByTestId('onboarding-link')
          .getByText(/^https:\/\/connect\.stripe\.com\/setup\/e\/acct_/)
          .waitFor();
        expect(await seriousViolations(merchant)).toEqual([]);
        await shoot(merchant, 'dashboard-stripe-link');
      });
      // One account for the partner, however many links.
      expect(stripe.requests.filter((r) => r.path === '/v1/accounts' && r.params.email === email)).toHaveLength(1);
      await partner.context().close();
      await merchant.context().close();
    },
  );
});
