import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumForBlock, describeInBrowser } from '../snippet/support/browser.js';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';
import { buildDashboard, capture, DESKTOP, pageErrors, PHONE, seriousViolations, sidewaysScrolling, signedInPage, withFailureScreenshots } from './support/dashboard.js';
import { call, ownerSession, startService, type PeopleServer } from './support/people.js';

/** The payouts page sends selected payouts through PayPal, shows each one's method, status and failure reason, and retries a failed one. */
const POLL = { timeout: 10_000 };
let service: PeopleServer;
let base: string;
let paypal: PayPalStandIn;
const previousBase = process.env.PAYPAL_API_BASE_URL;

beforeAll(async () => {
  buildDashboard();
  paypal = await new PayPalStandIn().start();
  process.env.PAYPAL_API_BASE_URL = paypal.baseUrl;
  service = await startService({ WEBHOOK_ALLOW_PRIVATE_URLS: true });
  base = service.baseUrl;
}, 120_000);
afterAll(async () => {
  if (previousBase === undefined) delete process.env.PAYPAL_API_BASE_URL;
  else process.env.PAYPAL_API_BASE_URL = previousBase;
  await service?.close();
  await paypal?.stop();
});

describeInBrowser('sending payouts from the dashboard', () => {
  const browser = chromiumForBlock();

  it('select pending payouts and Send; processing then failed with the reason; Retry sends a new payout', { timeout: 120_000 }, async () => {
    const owner = await ownerSession(base, 'Payout Rails Ltd');
    const key = { authorization: `Bearer ${owner.apiKey}` };
    const program = (await call(base, 'POST', '/api/programs', { headers: key, body: { name: 'Main', commission_value: 30, currency: 'USD' } })).body.data.program;
    const jane = (await call(base, 'POST', '/api/affiliates', { headers: key, body: { email: 'jane@example.com', name: 'Jane Partner', program_id: program.id, payout_email: 'jane.paypal@example.com' } })).body.data.affiliate;
    const manual = (await call(base, 'POST', '/api/affiliates', { headers: key, body: { email: 'max@example.com', name: 'Max Manual', program_id: program.id } })).body.data.affiliate;
    expect((await call(base, 'PATCH', `/api/affiliates/${jane.id}`, { headers: key, body: { payout_method: 'paypal' } })).status).toBe(200);
    for (const [a, amount] of [[jane, 40], [manual, 25]] as const) {
      expect((await call(base, 'POST', '/api/commissions', { headers: key, body: { affiliate_id: a.id, amount, description: 'earned' } })).status).toBe(201);
    }
    expect((await call(base, 'POST', '/api/payouts', { headers: key, body: {} })).status).toBe(201);
    const put = await call(base, 'PUT', '/api/integrations/paypal_payouts', { headers: key, body: { client_id: paypal.clientId, client_secret: paypal.clientSecret, environment: 'sandbox', webhook_id: paypal.webhookId } });
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
      await payouts.getByRole('row', { name: /\$25\.00/ }).getByRole('checkbox').check();
      await page.getByRole('button', { name: 'Send 1 selected' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => section.textContent(), POLL).toContain('pay it with the export files');
      await payouts.getByRole('row', { name: /\$25\.00/ }).getByRole('checkbox').uncheck();

      await janeRow.getByRole('checkbox').check();
      await page.getByRole('button', { name: 'Send 1 selected' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Send' }).click();
      await section.getByRole('combobox', { name: 'Status' }).selectOption('');
      const sentRow = payouts.getByRole('row', { name: /\$40\.00/ });
      await expect.poll(() => sentRow.textContent(), POLL).toMatch(/processing|failed/);
      const [sent] = (await call(base, 'GET', `/api/payouts?affiliate_id=${jane.id}`, { headers: key })).body.data.payouts;
      await expect.poll(() => paypal.item(sent.id)?.transaction_status, POLL).toBe('PENDING');

      paypal.setItem(sent.id, 'RETURNED', { name: 'RECEIVER_UNREGISTERED', message: 'Receiver is unregistered' });
      const hook = paypal.webhookFor(sent.id, 'RETURNED');
      expect((await fetch(`${base}/webhooks/paypal/${owner.organization.id}`, { method: 'POST', headers: hook.headers, body: hook.body })).status).toBe(200);
      await page.reload();
      await section.getByRole('combobox', { name: 'Status' }).selectOption('failed');
      const failedRow = payouts.getByRole('row', { name: /\$40\.00/ });
      await expect.poll(() => failedRow.textContent(), POLL).toContain('PayPal: RETURNED (RECEIVER_UNREGISTERED: Receiver is unregistered)');
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
      await expect.poll(() => payouts.getByRole('row', { name: /\$40\.00/ }).textContent(), POLL).toContain('processing');
      const all = (await call(base, 'GET', `/api/payouts?affiliate_id=${jane.id}`, { headers: key })).body.data.payouts.map((p: any) => p.status).sort();
      expect(all).toEqual(['failed', 'processing']);

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
  });
});
