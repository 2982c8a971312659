import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumForBlock, describeInBrowser } from '../snippet/support/browser.js';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';
import {
  buildDashboard,
  capture,
  DESKTOP,
  pageErrors,
  PHONE,
  seriousViolations,
  sidewaysScrolling,
  signedInPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { invitedMember, payoutsToSpend } from './support/access.js';
import { call, ownerSession, startService, type PeopleServer } from './support/people.js';
import { merchantWithProgram, signedInPartner } from './support/portal.js';
import { startSmtpReceiver, type SmtpReceiver } from './support/smtp.js';

/** The payouts page sends selected payouts through PayPal, shows each one's method, status and failure reason, and retries a failed one. */
const POLL = { timeout: 10_000 };
let service: PeopleServer;
let base: string;
let paypal: PayPalStandIn;
let smtp: SmtpReceiver;
const previousBase = process.env.PAYPAL_API_BASE_URL;

beforeAll(async () => {
  buildDashboard();
  paypal = await new PayPalStandIn().start();
  process.env.PAYPAL_API_BASE_URL = paypal.baseUrl;
  smtp = await startSmtpReceiver();
  service = await startService({
    WEBHOOK_ALLOW_PRIVATE_URLS: true,
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Shop partners <partners@shop.example>',
  });
  base = service.baseUrl;
}, 120_000);
afterAll(async () => {
  if (previousBase === undefined) delete process.env.PAYPAL_API_BASE_URL;
  else process.env.PAYPAL_API_BASE_URL = previousBase;
  await service?.close();
  await paypal?.stop();
  await smtp?.close();
});

describeInBrowser('sending payouts from the dashboard', () => {
  const browser = chromiumForBlock();

  it(
    'a member sees the payouts but no Send, no selection and no Retry: the page says only an owner can',
    { timeout: 120_000 },
    async () => {
      const owner = await ownerSession(base, 'Members Ltd');
      const program = (
        await call(base, 'POST', '/api/programs', {
          headers: { authorization: `Bearer ${owner.apiKey}` },
          body: { name: 'Main', commission_value: 30, currency: 'USD' },
        })
      ).body.data.program;
      // A failed payout of $10.00 (PayPal returned it) and a pending one of $20.00.
      await payoutsToSpend(base, owner.apiKey, owner.organization.id, program.id, paypal);
      const member = await invitedMember(base, owner.cookie);
      const { context, page } = await signedInPage(browser(), base, member.cookie);
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'payouts-member', async () => {
        await page.goto(`${base}/dashboard`);
        await page.getByRole('link', { name: 'Commissions & payouts' }).click();
        const section = page.locator('section[aria-labelledby="payouts-title"]');
        await section.getByText('Only an owner can send payouts through PayPal, Stripe or Wise').waitFor();
        await section.getByRole('combobox', { name: 'Status' }).selectOption('');
        const payouts = section.getByRole('region', { name: 'Payouts' });
        const failedRow = payouts.getByRole('row', { name: /\$10\.00/ });
        await expect.poll(() => failedRow.textContent(), POLL).toContain('Only an owner can retry a payout');
        const pendingRow = payouts.getByRole('row', { name: /\$20\.00/ });
        // What moves no money stays a member's: marking paid, canceling.
        await pendingRow.getByRole('button', { name: 'Mark paid…' }).waitFor();
        expect(await section.getByRole('button', { name: /^Send/ }).count()).toBe(0);
        expect(await payouts.getByRole('checkbox').count()).toBe(0);
        expect(await payouts.getByRole('button', { name: 'Retry' }).count()).toBe(0);
        await capture(page, 'payouts-member');
        await page.screenshot({ path: '.tmp/web-shots/payouts-member-1280.png', fullPage: true });
        await page.setViewportSize(PHONE);
        await page.waitForTimeout(200);
        await page.screenshot({ path: '.tmp/web-shots/payouts-member-390.png', fullPage: true });
        expect(await sidewaysScrolling(page)).toEqual([]);
        expect(await seriousViolations(page)).toEqual([]);
        expect(errors).toEqual([]);
      });
      await context.close();
    },
  );

  it(
    'select pending payouts and Send; processing then failed with the reason; Retry sends a new payout',
    { timeout: 120_000 },
    async () => {
      const owner = await ownerSession(base, 'Payout Rails Ltd');
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const program = (
        await call(base, 'POST', '/api/programs', {
          headers: key,
          body: { name: 'Main', commission_value: 30, currency: 'USD' },
        })
      ).body.data.program;
      const jane = (
        await call(base, 'POST', '/api/affiliates', {
          headers: key,
          body: {
            email: 'jane@example.com',
            name: 'Jane Partner',
            program_id: program.id,
            payout_email: 'jane.paypal@example.com',
          },
        })
      ).body.data.affiliate;
      const manual = (
        await call(base, 'POST', '/api/affiliates', {
          headers: key,
          body: { email: 'max@example.com', name: 'Max Manual', program_id: program.id },
        })
      ).body.data.affiliate;
      expect(
        (await call(base, 'PATCH', `/api/affiliates/${jane.id}`, { headers: key, body: { payout_method: 'paypal' } }))
          .status,
      ).toBe(200);
      for (const [a, amount] of [
        [jane, 40],
        [manual, 25],
      ] as const) {
        expect(
          (
            await call(base, 'POST', '/api/commissions', {
              headers: key,
              body: { affiliate_id: a.id, amount, description: 'earned' },
            })
          ).status,
        ).toBe(201);
      }
      expect((await call(base, 'POST', '/api/payouts', { headers: key, body: {} })).status).toBe(201);
      const put = await call(base, 'PUT', '/api/integrations/paypal_payouts', {
        headers: key,
        body: {
          client_id: paypal.clientId,
          client_secret: paypal.clientSecret,
          environment: 'sandbox',
          webhook_id: paypal.webhookId,
        },
      });
      expect(put.status).toBe(200);

      const { context, page } = await signedInPage(browser(), base, owner.cookie);
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'payout-rails', async () => {
        await page.goto(`${base}/dashboard`);
        await page.getByRole('link', { name: 'Commissions & payouts' }).click();
        const section = page.locator('section[aria-labelledby="payouts-title"]');
        const payouts = section.getByRole('region', { name: 'Payouts' });
        const janeRow = payouts.getByRole('row', { name: /\$40\.00/ });
        await expect.poll(() => janeRow.textContent(), POLL).toContain('PayPal');
        expect(await payouts.getByRole('row', { name: /\$25\.00/ }).textContent()).toContain('Manual (export)');

        // A manual payout is refused with the export files named; nothing is sent.
        await payouts
          .getByRole('row', { name: /\$25\.00/ })
          .getByRole('checkbox')
          .check();
        await page.getByRole('button', { name: 'Send 1 selected' }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Send' }).click();
        await expect.poll(() => section.textContent(), POLL).toContain('pay it with the export files');
        await payouts
          .getByRole('row', { name: /\$25\.00/ })
          .getByRole('checkbox')
          .uncheck();

        await janeRow.getByRole('checkbox').check();
        await page.getByRole('button', { name: 'Send 1 selected' }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Send' }).click();
        await section.getByRole('combobox', { name: 'Status' }).selectOption('');
        const sentRow = payouts.getByRole('row', { name: /\$40\.00/ });
        await expect.poll(() => sentRow.textContent(), POLL).toMatch(/processing|failed/);
        const [sent] = (await call(base, 'GET', `/api/payouts?affiliate_id=${jane.id}`, { headers: key })).body.data
          .payouts;
        await expect.poll(() => paypal.item(sent.id)?.transaction_status, POLL).toBe('PENDING');

        paypal.setItem(sent.id, 'RETURNED', { name: 'RECEIVER_UNREGISTERED', message: 'Receiver is unregistered' });
        const hook = paypal.webhookFor(sent.id, 'RETURNED');
        expect(
          (
            await fetch(`${base}/webhooks/paypal/${owner.organization.id}`, {
              method: 'POST',
              headers: hook.headers,
              body: hook.body,
            })
          ).status,
        ).toBe(200);
        await page.reload();
        await section.getByRole('combobox', { name: 'Status' }).selectOption('failed');
        const failedRow = payouts.getByRole('row', { name: /\$40\.00/ });
        await expect
          .poll(() => failedRow.textContent(), POLL)
          .toContain('PayPal: RETURNED (RECEIVER_UNREGISTERED: Receiver is unregistered)');
        await capture(page, 'payouts-failed-desktop');
        await page.screenshot({ path: '.tmp/web-shots/payouts-failed-1280.png', fullPage: true });
        await page.setViewportSize({ width: 390, height: 844 });
        await page.waitForTimeout(200);
        await page.screenshot({ path: '.tmp/web-shots/payouts-failed-390.png', fullPage: true });
        expect(await sidewaysScrolling(page)).toEqual([]);
        expect(await seriousViolations(page)).toEqual([]);
        await page.setViewportSize(DESKTOP);

        await failedRow.getByRole('button', { name: 'Retry' }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Retry' }).click();
        await section.getByRole('combobox', { name: 'Status' }).selectOption('processing');
        await expect
          .poll(() => payouts.getByRole('row', { name: /\$40\.00/ }).textContent(), POLL)
          .toContain('processing');
        const all = (
          await call(base, 'GET', `/api/payouts?affiliate_id=${jane.id}`, { headers: key })
        ).body.data.payouts
          .map((p: any) => p.status)
          .sort();
        expect(all).toEqual(['failed', 'processing']);

        // Retried once: no Retry any more (it would answer 409); the failed payout names its retry, which a click shows.
        const retriedAs = (await call(base, 'GET', `/api/payouts/${sent.id}`, { headers: key })).body.data.payout
          .retried_by_payout_id as string;
        expect(retriedAs).toEqual(expect.any(String));
        await section.getByRole('combobox', { name: 'Status' }).selectOption('failed');
        const retriedRow = payouts.getByRole('row', { name: /\$40\.00/ });
        await expect.poll(() => retriedRow.textContent(), POLL).toContain(`Retried as payout ${retriedAs.slice(0, 8)}`);
        expect(await retriedRow.getByRole('button', { name: 'Retry' }).count()).toBe(0);
        await page.screenshot({ path: '.tmp/web-shots/payouts-retried-1280.png', fullPage: true });
        await page.setViewportSize({ width: 390, height: 844 });
        await page.waitForTimeout(200);
        await page.screenshot({ path: '.tmp/web-shots/payouts-retried-390.png', fullPage: true });
        expect(await sidewaysScrolling(page)).toEqual([]);
        expect(await seriousViolations(page)).toEqual([]);
        await page.setViewportSize(DESKTOP);
        await retriedRow.getByRole('button', { name: `Retried as payout ${retriedAs.slice(0, 8)}: show it` }).click();
        expect(await section.getByRole('combobox', { name: 'Status' }).inputValue()).toBe('');
        await page.locator(`#payout-${retriedAs}.shown-payout`).waitFor(POLL);
        expect(await payouts.locator('tr', { has: page.locator(`#payout-${retriedAs}`) }).textContent()).toMatch(
          /processing|paid/,
        );

        // The rails on the Integrations page: PayPal configured (sandbox), the others not; a missing field is named.
        await page.getByRole('link', { name: 'Integrations' }).click();
        const card = page.getByRole('article', { name: /PayPal Payouts/ });
        await expect.poll(() => card.textContent(), POLL).toContain('configured');
        expect(await card.textContent()).toContain('sandbox');
        const wiseCard = page.getByRole('article', { name: /^Wise/ });
        await wiseCard.getByLabel('API token').fill('token-123');
        await wiseCard.getByRole('button', { name: 'Store credentials' }).click();
        await expect.poll(() => wiseCard.textContent(), POLL).toContain('Required');
        await page.screenshot({ path: '.tmp/web-shots/integrations-rails-1280.png', fullPage: true });
        await page.setViewportSize({ width: 390, height: 844 });
        await page.waitForTimeout(200);
        await page.screenshot({ path: '.tmp/web-shots/integrations-rails-390.png', fullPage: true });
        expect(await sidewaysScrolling(page)).toEqual([]);
        expect(errors).toEqual([]);
      });
      await context.close();
      void PHONE;
    },
  );

  it(
    "the portal says where a failed payout's commissions went once the merchant retried it",
    { timeout: 120_000 },
    async () => {
      const m = await merchantWithProgram(base, { signup: 'open', hold_days: 0, currency: 'USD' });
      const partner = await signedInPartner(base, smtp, m.organizationId, m.program.id);
      expect(
        (
          await call(base, 'PATCH', `/api/affiliates/${partner.affiliateId}`, {
            headers: m.key,
            body: { payout_method: 'paypal' },
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await call(base, 'POST', '/api/commissions', {
            headers: m.key,
            body: { affiliate_id: partner.affiliateId, amount: 33, description: 'bonus' },
          })
        ).status,
      ).toBe(201);
      const [created] = (await call(base, 'POST', '/api/payouts', { headers: m.key, body: {} })).body.data.payouts;
      expect(
        (
          await call(base, 'PUT', '/api/integrations/paypal_payouts', {
            headers: m.key,
            body: {
              client_id: paypal.clientId,
              client_secret: paypal.clientSecret,
              environment: 'sandbox',
              webhook_id: paypal.webhookId,
            },
          })
        ).status,
      ).toBe(200);
      // Wise too: the partner may choose it in the portal.
      expect(
        (
          await call(base, 'PUT', '/api/integrations/wise', {
            headers: m.key,
            body: { api_token: 'wise-token', profile_id: '123', environment: 'sandbox' },
          })
        ).status,
      ).toBe(200);
      expect(
        (await call(base, 'POST', '/api/payouts/send', { headers: m.key, body: { payout_ids: [created.id] } })).status,
      ).toBe(202);
      await expect.poll(() => paypal.item(created.id)?.transaction_status, POLL).toBe('PENDING');
      paypal.setItem(created.id, 'FAILED', { name: 'RECEIVER_UNCONFIRMED', message: 'Receiver is unconfirmed' });
      const hook = paypal.webhookFor(created.id, 'FAILED');
      expect(
        (
          await fetch(`${base}/webhooks/paypal/${m.organizationId}`, {
            method: 'POST',
            headers: hook.headers,
            body: hook.body,
          })
        ).status,
      ).toBe(200);
      const retried = await call(base, 'POST', `/api/payouts/${created.id}/retry`, { headers: m.key, body: {} });
      expect(retried.status, JSON.stringify(retried.body)).toBe(202);
      const seen = (await call(base, 'GET', '/partner/api/payouts', { headers: { cookie: partner.cookie } })).body.data
        .payouts;
      expect(seen.find((p: any) => p.id === created.id)).toMatchObject({
        status: 'failed',
        retried_by_payout_id: retried.body.data.payout.id,
      });

      const context = await browser().newContext({ viewport: DESKTOP, bypassCSP: true });
      const [name, ...value] = partner.cookie.split('=');
      await context.addCookies([{ name: name, value: value.join('='), url: base }]);
      const page = await context.newPage();
      await withFailureScreenshots(page, 'payout-retried-portal', async () => {
        await page.goto(`${base}/portal/${m.organizationId}`);
        const payouts = page.getByRole('region', { name: 'Payouts' });
        const failedRow = payouts.getByRole('row', { name: /failed/ });
        await expect
          .poll(() => failedRow.textContent(), POLL)
          .toContain('PayPal: FAILED (RECEIVER_UNCONFIRMED: Receiver is unconfirmed).');
        const text = await failedRow.textContent();
        expect(text).toMatch(
          /Sent again: these commissions went into the payout of .+ \(\$33\.00, (processing|paid)\)\./,
        );
        expect(text).not.toContain('go into the next payout');
        // One place for the payout e-mail: with the payout method (the merchant pays by PayPal).
        const card = page.getByTestId('payout-method');
        await card.getByRole('heading', { name: 'How you are paid' }).waitFor();
        expect(await page.locator('input[type="email"]').count()).toBe(1);
        expect(await page.getByRole('heading', { name: 'Payout e-mail' }).count()).toBe(0);
        const email = card.getByLabel('Payout e-mail', { exact: true });
        expect(await email.inputValue()).toBe(partner.email);
        await card.getByLabel('Wise', { exact: true }).check();
        expect(await page.locator('input[type="email"]').count()).toBe(1);
        await email.fill('partner.wise@pay.example');
        await card.getByRole('button', { name: 'Save', exact: true }).click();
        await card.getByText('Saved: you are paid by Wise at partner.wise@pay.example.').waitFor(POLL);
        expect(
          (await call(base, 'GET', `/api/affiliates/${partner.affiliateId}`, { headers: m.key })).body.data.affiliate,
        ).toMatchObject({ payout_method: 'wise', payout_email: 'partner.wise@pay.example' });
        await page.screenshot({ path: '.tmp/web-shots/portal-payout-retried-1280.png', fullPage: true });
        await page.setViewportSize({ width: 390, height: 844 });
        await page.waitForTimeout(200);
        await page.screenshot({ path: '.tmp/web-shots/portal-payout-retried-390.png', fullPage: true });
        await card.screenshot({ path: '.tmp/web-shots/portal-how-paid-390.png' });
        expect(await sidewaysScrolling(page)).toEqual([]);
        expect(await seriousViolations(page)).toEqual([]);
        await page
          .locator('#payouts-title')
          .locator('xpath=..')
          .screenshot({ path: '.tmp/web-shots/portal-payouts-390.png' });
        // A bad address is named at the field.
        await email.fill('not-an-address');
        await card.getByRole('button', { name: 'Save', exact: true }).click();
        await expect.poll(() => email.getAttribute('aria-invalid'), POLL).toBe('true');
        await email.fill('partner.wise@pay.example');
      });
      await context.close();
    },
  );
});
