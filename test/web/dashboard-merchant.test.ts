import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeInBrowser, launchChromium } from '../snippet/support/browser.js';
import {
  buildDashboard,
  capture,
  DESKTOP,
  pageErrors,
  signInOnPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession, startService, type PeopleServer } from './support/people.js';

/**
 * What a merchant running a program sees in the dashboard (issue 38): where partners are paid,
 * their links on the program's website, the figures the API computes (gross, refunds, net), why a
 * commission is held and releasing it in one click, the program's rules, partners' names in every
 * table, a refund in one dialog, the team, and the getting-started checklist.
 */
let service: PeopleServer;
let base: string;
let browser: Browser;

beforeAll(async () => {
  buildDashboard();
  service = await startService();
  base = service.baseUrl;
}, 120_000);
afterAll(() => service?.close());

/** An organization with an owner signed in to the dashboard in a new page, its API key, and a program. */
async function merchant(program: Record<string, unknown> = {}) {
  const owner = await ownerSession(base);
  const key = { authorization: `Bearer ${owner.apiKey}` };
  const created = await call(base, 'POST', '/api/programs', {
    headers: key,
    body: { name: 'Main', commission_value: 30, ...program },
  });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  const context = await browser.newContext({ viewport: DESKTOP });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  const errors = pageErrors(page);
  await signInOnPage(page, base, owner.email);
  return {
    owner,
    key,
    program: created.body.data.program as { id: string },
    page,
    errors,
    close: () => context.close(),
  };
}

/** Pages load their figures after they render: a few seconds' patience on a shared machine. */
const POLL = { timeout: 10_000 };

const text = async (page: Page, selector: string) =>
  (await page.locator(selector).first().textContent())?.replace(/\s+/g, ' ').trim();

describeInBrowser('the merchant dashboard, as a merchant runs a program', () => {
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  it(
    'sets the payout e-mail when adding an affiliate and edits it on their page; Copy link gives the program website with ?ref=',
    { timeout: 90_000 },
    async () => {
      const m = await merchant({ website_url: 'https://shop.example.com/pricing' });
      await withFailureScreenshots(m.page, 'merchant-payout-email', async () => {
        const { page } = m;
        await page.getByRole('link', { name: 'Affiliates' }).click();
        await page.getByRole('button', { name: 'Add affiliate' }).click();
        const form = page.locator('form[aria-label="Add an affiliate"]');
        await form.getByLabel('E-mail', { exact: true }).fill('jane@example.com');
        await form.getByLabel('Name').fill('Jane Partner');
        await form.getByLabel('Payout e-mail').fill('jane-paypal@pay.example');
        await form.getByLabel('Referral slug').fill('jane');
        await form.getByRole('button', { name: 'Add affiliate' }).click();
        const row = page.getByRole('row', { name: /Jane Partner/ });
        await row.waitFor();
        const [jane] = (await call(base, 'GET', '/api/affiliates', { headers: m.key })).body.data.affiliates;
        expect(jane.payout_email).toBe('jane-paypal@pay.example');
        await row.getByRole('button', { name: 'Copy link' }).click();
        await expect
          .poll(() => page.evaluate(() => navigator.clipboard.readText()), POLL)
          .toBe('https://shop.example.com/pricing?ref=jane');

        await row.getByRole('link', { name: 'Jane Partner' }).click();
        await page.getByRole('heading', { name: 'Jane Partner' }).waitFor();
        await expect
          .poll(() => text(page, '[data-testid="referral-link"]'), POLL)
          .toBe('https://shop.example.com/pricing?ref=jane');
        await expect.poll(() => text(page, '[data-testid="payout-email"]'), POLL).toContain('jane-paypal@pay.example');
        await page.getByRole('button', { name: 'Change the payout e-mail' }).click();
        await page.getByLabel('Payout e-mail').fill('jane-wise@pay.example');
        await page.getByRole('button', { name: 'Save payout e-mail' }).click();
        await expect.poll(() => text(page, '[data-testid="payout-email"]'), POLL).toContain('jane-wise@pay.example');
        const saved = await call(base, 'GET', `/api/affiliates/${jane.id}`, { headers: m.key });
        expect(saved.body.data.affiliate.payout_email).toBe('jane-wise@pay.example');
        await capture(page, 'affiliate');
        expect(m.errors).toEqual([]);
      });
      await m.close();
    },
  );

  it(
    'Overview shows gross revenue, refunds and net revenue as the API computes them, and commissions by status',
    { timeout: 90_000 },
    async () => {
      const m = await merchant();
      const jane = (
        await call(base, 'POST', '/api/affiliates', {
          headers: m.key,
          body: { email: 'jane@example.com', name: 'Jane Partner', program_id: m.program.id, slug: 'jane' },
        })
      ).body.data.affiliate;
      expect(jane.slug).toBe('jane');
      // 0.1 + 0.2 in floating point is 0.30000000000000004: the figures are the service's, exact.
      const small = (
        await call(base, 'POST', '/api/conversions', {
          headers: m.key,
          body: { external_id: 'o-1', amount: 0.1, ref: 'jane' },
        })
      ).body.data.conversion;
      await call(base, 'POST', '/api/conversions', {
        headers: m.key,
        body: { external_id: 'o-2', amount: 0.2, ref: 'jane' },
      });
      const big = (
        await call(base, 'POST', '/api/conversions', {
          headers: m.key,
          body: { external_id: 'o-3', amount: 100, ref: 'jane' },
        })
      ).body.data.conversion;
      await call(base, 'POST', `/api/conversions/${small.id}/refund`, { headers: m.key, body: {} });
      await call(base, 'POST', `/api/conversions/${big.id}/refund`, { headers: m.key, body: { amount: 10 } });
      await withFailureScreenshots(m.page, 'merchant-overview', async () => {
        const { page } = m;
        await page.reload();
        await expect.poll(() => text(page, '.kpi:has-text("Gross revenue")'), POLL).toBe('Gross revenue$100.30');
        expect(await text(page, '.kpi:has-text("Refunds")')).toBe('Refunds$10.10');
        expect(await text(page, '.kpi:has-text("Net revenue")')).toBe('Net revenue$90.20');
        // 30 % of 0.2 and of 100 less 30 % of the 10 refunded: 0.06 + 27 pending.
        expect(await text(page, '.kpi:has-text("Commissions")')).toContain('$27.06 pending');
        const top = page.getByRole('region', { name: 'Top affiliates' }).getByRole('row', { name: /Jane Partner/ });
        await expect.poll(() => top.textContent(), POLL).toMatch(/\$90\.20.*\$10\.10.*\$27\.06 pending/);
        await capture(page, 'overview');
        // The affiliate's page: its figures, and each conversion's refund.
        await top.getByRole('link', { name: 'Jane Partner' }).click();
        await page.getByRole('heading', { name: 'Jane Partner' }).waitFor();
        await expect
          .poll(() => text(page, '[data-testid="affiliate-figures"]'), POLL)
          .toMatch(/Gross revenue\s?\$100\.30.*Refunds\s?\$10\.10.*Net revenue\s?\$90\.20/);
        const refunded = page
          .getByRole('region', { name: 'Conversions of this affiliate' })
          .getByRole('row', { name: /o-3/ });
        await expect.poll(() => refunded.textContent(), POLL).toMatch(/\$100\.00.*\$10\.00/);
        expect(m.errors).toEqual([]);
      });
      await m.close();
    },
  );

  it(
    'a held commission says why (self-referral, explained) and is released or rejected in one click; tables name the partner',
    { timeout: 90_000 },
    async () => {
      const m = await merchant();
      const jane = (
        await call(base, 'POST', '/api/affiliates', {
          headers: m.key,
          body: { email: 'jane@example.com', name: 'Jane Partner', program_id: m.program.id, slug: 'jane' },
        })
      ).body.data.affiliate;
      // Jane buys through her own link twice (her e-mail): both held as self-referrals.
      for (const id of ['cus-1', 'cus-2']) {
        await call(base, 'POST', '/api/customers', {
          headers: m.key,
          body: { customer_id: id, ref: 'jane', email: 'Jane@Example.com' },
        });
        await call(base, 'POST', '/api/conversions', {
          headers: m.key,
          body: { external_id: `order-${id}`, amount: id === 'cus-1' ? 50 : 20, customer_id: id },
        });
      }
      await withFailureScreenshots(m.page, 'merchant-holds', async () => {
        const { page } = m;
        await page.getByRole('link', { name: 'Commissions & payouts' }).click();
        const first = page.getByRole('region', { name: 'Commissions' }).getByRole('row', { name: /\$15\.00/ });
        await first.waitFor();
        await expect.poll(() => first.textContent(), POLL).toContain('Jane Partner');
        expect(await first.textContent()).toContain('self_referral');
        expect(await first.textContent()).toMatch(/customer's e-mail is the affiliate's own/i);
        await capture(page, 'commissions-held');
        // The affiliate's page says why too.
        await first.getByRole('link', { name: 'Jane Partner' }).click();
        await expect
          .poll(() => page.getByRole('region', { name: 'Commissions of this affiliate' }).textContent(), POLL)
          .toMatch(/on hold.*self_referral.*on hold.*self_referral/);
        await page.goBack();
        await first.getByRole('button', { name: /^Release/ }).click();
        await page
          .getByRole('region', { name: 'Commissions' })
          .getByRole('row', { name: /\$15\.00 approved/ })
          .waitFor();
        expect(await page.getByRole('dialog').count()).toBe(0);
        const second = page.getByRole('region', { name: 'Commissions' }).getByRole('row', { name: /\$6\.00/ });
        await second.getByRole('button', { name: /^Reject/ }).click();
        await page
          .getByRole('region', { name: 'Commissions' })
          .getByRole('row', { name: /\$6\.00 rejected/ })
          .waitFor();
        const entries = (await call(base, 'GET', `/api/commissions?affiliate_id=${jane.id}`, { headers: m.key })).body
          .data.commissions as { amount: number; status: string }[];
        expect(entries.map((e) => [e.amount, e.status]).sort()).toEqual([
          [15, 'approved'],
          [6, 'rejected'],
        ]);
        // A payout names Jane too.
        await page.getByRole('button', { name: 'Create payouts' }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Create payouts' }).click();
        await expect
          .poll(
            () =>
              page
                .getByRole('region', { name: 'Payouts' })
                .getByRole('row', { name: /\$15\.00/ })
                .textContent(),
            POLL,
          )
          .toContain('Jane Partner');
        // Conversions (Customers page) and a customer name her as well; no "view" in place of a name.
        await page.getByRole('link', { name: 'Customers' }).click();
        const sale = page.getByRole('region', { name: 'Recent conversions' }).getByRole('row', { name: /order-cus-1/ });
        await expect.poll(() => sale.textContent(), POLL).toContain('Jane Partner');
        await page.getByLabel("Your customer_id or a charge's external_id").fill('cus-1');
        await page.getByRole('button', { name: 'Find' }).click();
        await expect.poll(() => text(page, '.card:has-text("Customer cus-1")'), POLL).toContain('Jane Partner');
        expect(await page.locator('main').getByText('view', { exact: true }).count()).toBe(0);
        expect(m.errors).toEqual([]);
      });
      await m.close();
    },
  );

  it(
    "shows the program's rules (attribution, caps, tiers, fraud rules) and changes them",
    { timeout: 90_000 },
    async () => {
      const m = await merchant();
      await withFailureScreenshots(m.page, 'merchant-rules', async () => {
        const { page } = m;
        await page.getByRole('link', { name: 'Programs' }).click();
        const row = page.getByRole('row', { name: /Main/ });
        await expect.poll(() => row.textContent(), POLL).toMatch(/last click/);
        expect(await row.textContent()).toMatch(/self-referral, disposable e-mail, click flood/);
        await row.getByRole('button', { name: 'Edit Main' }).click();
        const form = page.locator('form[aria-label="Edit Main"]');
        await form.getByLabel('Attribution').selectOption('first_click');
        await form.getByLabel('Paid conversions per customer').fill('12');
        await form.getByLabel('Hold self-referrals').uncheck();
        await form.getByLabel('Hold sales within 10 seconds of their click').check();
        await form.getByRole('button', { name: 'Add a tier' }).click();
        await form.getByLabel('Tiers by').selectOption('revenue');
        await form.getByLabel('From (tier 1)').fill('1000');
        await form.getByLabel('Rate (tier 1)').fill('40');
        await capture(page, 'program-rules');
        await form.getByRole('button', { name: 'Save changes' }).click();
        await expect.poll(() => row.textContent(), POLL).toMatch(/first click/);
        const program = (await call(base, 'GET', `/api/programs/${m.program.id}`, { headers: m.key })).body.data
          .program;
        expect(program).toMatchObject({
          attribution_model: 'first_click',
          commission_max_conversions: 12,
          commission_tiers: { metric: 'revenue', tiers: [{ from: 1000, commission_value: 40 }] },
          fraud_rules: { self_referral: false, disposable_email: true, click_flood: true, fast_conversion: true },
        });
        expect(await row.textContent()).toMatch(/12 paid conversions/);
        expect(await row.textContent()).toMatch(/disposable e-mail, click flood, fast conversion/);
        expect(m.errors).toEqual([]);
      });
      await m.close();
    },
  );

  it('a refund is one dialog, empty again after it succeeds', { timeout: 90_000 }, async () => {
    const m = await merchant();
    await call(base, 'POST', '/api/affiliates', {
      headers: m.key,
      body: { email: 'jane@example.com', name: 'Jane Partner', program_id: m.program.id, slug: 'jane' },
    });
    await call(base, 'POST', '/api/conversions', {
      headers: m.key,
      body: { external_id: 'order-9', amount: 100, ref: 'jane' },
    });
    await withFailureScreenshots(m.page, 'merchant-refund', async () => {
      const { page } = m;
      await page.getByRole('link', { name: 'Customers' }).click();
      const row = page.getByRole('row', { name: /order-9/ });
      await row.getByRole('button', { name: 'Refund order-9' }).click();
      const dialog = page.getByRole('dialog', { name: 'Refund order-9' });
      await dialog.getByLabel('Amount to refund').fill('10');
      await capture(page, 'refund');
      await dialog.getByRole('button', { name: 'Record refund' }).click();
      await expect.poll(() => page.getByRole('dialog').count(), POLL).toBe(0);
      await expect.poll(() => row.textContent(), POLL).toContain('refunded $10.00');
      await row.getByRole('button', { name: 'Refund order-9' }).click();
      expect(
        await page.getByRole('dialog', { name: 'Refund order-9' }).getByLabel('Amount to refund').inputValue(),
      ).toBe('');
      expect(m.errors).toEqual([]);
    });
    await m.close();
  });

  it(
    'Team: an accepted invitation has no expiry; the owner cannot remove themselves',
    { timeout: 60_000 },
    async () => {
      const m = await merchant();
      await withFailureScreenshots(m.page, 'merchant-team', async () => {
        const { page } = m;
        await page.getByRole('link', { name: 'Team' }).click();
        const mine = page.getByRole('region', { name: 'Users' }).getByRole('row', { name: /Olivia Owner/ });
        await mine.waitFor();
        expect(await mine.getByRole('button', { name: /Remove/ }).count()).toBe(0);
        const accepted = page
          .getByRole('region', { name: 'Invitations' })
          .getByRole('row', { name: new RegExp(m.owner.email) });
        await expect.poll(() => accepted.textContent(), POLL).toContain('accepted');
        const invitation = (await call(base, 'GET', '/api/invitations', { headers: m.key })).body.data.invitations[0];
        const expiry = await page.evaluate(
          (iso) => new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' }),
          invitation.expires_at,
        );
        expect(await accepted.textContent()).not.toContain(expiry);
        expect(m.errors).toEqual([]);
      });
      await m.close();
    },
  );

  it(
    "Get started: the program, the snippet, the signup and payment calls in the merchant's own ids, then the first event turns the last step green",
    { timeout: 90_000 },
    async () => {
      const m = await merchant({ website_url: 'https://shop.example.com/' });
      await call(base, 'POST', '/api/affiliates', {
        headers: m.key,
        body: { email: 'jane@example.com', name: 'Jane Partner', program_id: m.program.id, slug: 'jane' },
      });
      await withFailureScreenshots(m.page, 'merchant-get-started', async () => {
        const { page } = m;
        await page.getByRole('link', { name: 'Get started' }).click();
        await page.getByRole('heading', { name: 'Get started' }).waitFor();
        const main = page.locator('main');
        await expect.poll(() => main.textContent(), POLL).toContain('createReferralMiddleware');
        await expect.poll(() => main.textContent(), POLL).toContain('https://shop.example.com/?ref=jane');
        await page.getByRole('tab', { name: 'Next.js middleware' }).click();
        const content = (await main.textContent())!;
        expect(content).toContain('referralCookie');
        expect(content).toContain(m.owner.organization.id);
        expect(content).toContain('https://shop.example.com/?ref=jane');
        expect(content).toContain('kind: "initial"');
        expect(content).toMatch(/self.referral/i);
        const signup = page.getByRole('region', { name: 'At signup, record the customer' });
        const payment = page.getByRole('region', { name: 'At payment, record the conversion' });
        for (const tab of ['curl', 'Node.js SDK', 'Python', 'PHP']) {
          await signup.getByRole('tab', { name: tab }).click();
          expect(await signup.getByRole('tabpanel').textContent(), tab).toMatch(/customers/);
          await payment.getByRole('tab', { name: tab }).click();
          expect(await payment.getByRole('tabpanel').textContent(), tab).toMatch(/conversions/);
        }
        expect(await signup.getByRole('tabpanel').textContent()).toContain('$user->id');
        expect(await payment.getByRole('tabpanel').textContent()).toContain('"kind" => "initial"');
        await signup.getByRole('tab', { name: 'curl' }).click();
        expect(await signup.getByRole('tabpanel').textContent()).toContain('"ref": "jane"');
        const waiting = page.getByTestId('first-event');
        await expect.poll(() => waiting.textContent(), POLL).toMatch(/Waiting for your first event/);
        await capture(page, 'get-started');
        await call(base, 'POST', '/api/clicks', { headers: m.key, body: { ref: 'jane' } });
        await expect.poll(() => waiting.textContent(), { timeout: 20_000 }).toMatch(/First event received/);
        expect(await waiting.getAttribute('class')).toContain('done');
        expect(m.errors).toEqual([]);
      });
      await m.close();
    },
  );
});
