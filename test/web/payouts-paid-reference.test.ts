import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumForBlock, describeInBrowser } from '../snippet/support/browser.js';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';
import {
  buildDashboard,
  DESKTOP,
  pageErrors,
  seriousViolations,
  sidewaysScrolling,
  signedInPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession, startService, type PeopleServer } from './support/people.js';

/**
 * The payouts list says when each payout was paid and where to find the transfer: the provider's
 * ids (PayPal batch and item) and the merchant's own reference given when marking it paid.
 */
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

describeInBrowser('the payouts list', () => {
  const browser = chromiumForBlock();

  it(
    'shows the paid date, the PayPal batch and item ids, and the reference given when marked paid',
    { timeout: 120_000 },
    async () => {
      const owner = await ownerSession(base, 'Paid Dates Ltd');
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const program = (
        await call(base, 'POST', '/api/programs', {
          headers: key,
          body: { name: 'Main', commission_value: 30, currency: 'USD' },
        })
      ).body.data.program;
      const affiliate = async (email: string, name: string) =>
        (await call(base, 'POST', '/api/affiliates', { headers: key, body: { email, name, program_id: program.id } }))
          .body.data.affiliate;
      const jane = await affiliate('jane@example.com', 'Jane Partner');
      const max = await affiliate('max@example.com', 'Max Manual');
      expect(
        (await call(base, 'PATCH', `/api/affiliates/${jane.id}`, { headers: key, body: { payout_method: 'paypal' } }))
          .status,
      ).toBe(200);
      for (const [a, amount] of [
        [jane, 40],
        [max, 25],
      ] as const) {
        const res = await call(base, 'POST', '/api/commissions', {
          headers: key,
          body: { affiliate_id: a.id, amount, description: 'earned' },
        });
        expect(res.status).toBe(201);
      }
      const created = await call(base, 'POST', '/api/payouts', { headers: key, body: {} });
      expect(created.status).toBe(201);
      const byAffiliate = (id: string) => created.body.data.payouts.find((p: any) => p.affiliate_id === id);
      expect(
        (
          await call(base, 'PUT', '/api/integrations/paypal_payouts', {
            headers: key,
            body: {
              client_id: paypal.clientId,
              client_secret: paypal.clientSecret,
              environment: 'sandbox',
              webhook_id: paypal.webhookId,
            },
          })
        ).status,
      ).toBe(200);
      const janePayout = byAffiliate(jane.id);
      expect(
        (await call(base, 'POST', '/api/payouts/send', { headers: key, body: { payout_ids: [janePayout.id] } })).status,
      ).toBe(202);
      await expect.poll(() => paypal.item(janePayout.id)?.transaction_status, POLL).toBe('PENDING');
      const item = paypal.setItem(janePayout.id, 'SUCCESS');
      const hook = paypal.webhookFor(janePayout.id, 'SUCCEEDED');
      expect(
        (
          await fetch(`${base}/webhooks/paypal/${owner.organization.id}`, {
            method: 'POST',
            headers: hook.headers,
            body: hook.body,
          })
        ).status,
      ).toBe(200);
      const marked = await call(base, 'POST', `/api/payouts/${byAffiliate(max.id).id}/paid`, {
        headers: key,
        body: { reference: 'WIRE-2026-11-0042' },
      });
      expect(marked.status, JSON.stringify(marked.body)).toBe(200);
      const paidOn = new Date(marked.body.data.payout.paid_at).toLocaleDateString('en-US', {
        year: 'numeric',
        month: 'short',
        day: 'numeric',
      });

      const { context, page } = await signedInPage(browser(), base, owner.cookie, { locale: 'en-US' });
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'payouts-paid-reference', async () => {
        await page.goto(`${base}/dashboard`);
        await page.getByRole('link', { name: 'Commissions & payouts' }).click();
        const section = page.locator('section[aria-labelledby="payouts-title"]');
        await section.getByRole('combobox', { name: 'Status' }).selectOption('paid');
        const payouts = section.getByRole('region', { name: 'Payouts' });
        const janeRow = payouts.getByRole('row', { name: /\$40\.00/ });
        await expect.poll(() => janeRow.textContent(), POLL).toContain(`PayPal batch ${item.payout_batch_id}`);
        expect(await janeRow.textContent()).toContain(`item ${item.payout_item_id}`);
        expect(await janeRow.locator('td[data-label="Paid"]').textContent()).toBe(paidOn);
        const maxRow = payouts.getByRole('row', { name: /\$25\.00/ });
        expect(await maxRow.textContent()).toContain('Your reference WIRE-2026-11-0042');
        expect(await maxRow.locator('td[data-label="Paid"]').textContent()).toBe(paidOn);
        for (const [label, viewport] of [
          ['1280', DESKTOP],
          ['390', { width: 390, height: 844 }],
        ] as const) {
          await page.setViewportSize(viewport);
          await page.waitForTimeout(200);
          await page.screenshot({ path: `/work/shots-5/payouts-paid-${label}.png`, fullPage: true });
          expect(await sidewaysScrolling(page)).toEqual([]);
        }
        expect(await seriousViolations(page)).toEqual([]);
        expect(errors).toEqual([]);
      });
      await context.close();
    },
  );
});
