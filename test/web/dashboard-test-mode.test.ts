import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fromRepoRoot } from '../../server/src/paths.js';
import { TEST_ADMIN_TOKEN } from '../support/server.js';
import { describeInBrowser, launchChromium } from '../snippet/support/browser.js';
import {
  buildDashboard,
  DESKTOP,
  seriousViolations,
  sidewaysScrolling,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession, PASSWORD, session, startService, type PeopleServer } from './support/people.js';

/**
 * The dashboard's test mode (spec/test-mode.md, "Dashboard and portal"), in Chromium against a real
 * service: the switch and its banner on every page, test data only while it is on and live data
 * only while it is off, across a reload; Delete all test data; test keys on the Developers page;
 * the checklist in test mode; the portal preview as a test partner. Screenshots at 1280 and 390 px
 * go to TEST_MODE_SCREENSHOTS, else .tmp/test-mode-screenshots.
 */
const DIST = fromRepoRoot('.tmp/web-dist-test-mode');
const SHOTS = process.env.TEST_MODE_SCREENSHOTS ?? fromRepoRoot('.tmp/test-mode-screenshots');
const NARROW = { width: 390, height: 844 };
const POLL = { timeout: 10_000 };
const BANNER = 'Test mode — you are viewing test data; nothing here moves money or e-mails partners.';
const PAGES = [
  'get-started',
  'overview',
  'programs',
  'affiliates',
  'customers',
  'commissions',
  'integrations',
  'developers',
  'team',
  'imports',
];

let service: PeopleServer;
let base: string;
let browser: Browser;

beforeAll(async () => {
  buildDashboard(DIST);
  service = await startService({}, undefined, undefined, { webDist: DIST });
  base = service.baseUrl;
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
    await page.screenshot({ path: `${SHOTS}/${name}-${label}.png`, fullPage: true });
  }
  await page.setViewportSize(size);
}

/** An owner signed in, with the live key and a test key, and a program and an affiliate in each mode. */
async function merchant() {
  const owner = await ownerSession(base);
  const live = { authorization: `Bearer ${owner.apiKey}` };
  const issued = await call(base, 'POST', `/admin/organizations/${owner.organization.id}/api-keys`, {
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    body: { mode: 'test' },
  });
  if (issued.status !== 201) throw new Error(`test key: ${issued.status} ${JSON.stringify(issued.body)}`);
  const test = { authorization: `Bearer ${issued.body.data.api_key}` };
  const seed = async (key: Record<string, string>, program: string, name: string, slug: string) => {
    const p = await call(base, 'POST', '/api/programs', {
      headers: key,
      body: { name: program, commission_value: 20, website_url: 'https://shop.example.com/' },
    });
    if (p.status !== 201) throw new Error(JSON.stringify(p.body));
    const a = await call(base, 'POST', '/api/affiliates', {
      headers: key,
      body: { email: `${slug}@partners.example`, name, program_id: p.body.data.program.id, slug },
    });
    if (a.status !== 201) throw new Error(JSON.stringify(a.body));
    await call(base, 'POST', '/api/conversions', {
      headers: key,
      body: { external_id: `order-${slug}`, amount: 100, ref: slug },
    });
    return a.body.data.affiliate as { id: string };
  };
  const liveAffiliate = await seed(live, 'Live program', 'Live Larry', 'larry');
  const testAffiliate = await seed(test, 'Test program', 'Test Tina', 'tina');
  const context = await browser.newContext({ viewport: DESKTOP, bypassCSP: true });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}/dashboard/sign-in`);
  await page.getByLabel('E-mail').fill(owner.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/dashboard/overview');
  return { owner, live, test, liveAffiliate, testAffiliate, context, page, errors };
}

const banner = (page: Page) => page.getByRole('region', { name: 'Test mode', exact: true });
const modeSwitch = (page: Page) => page.getByRole('switch', { name: 'Test mode', exact: true });
const affiliateNames = (page: Page) =>
  page.getByRole('region', { name: 'Affiliates' }).getByRole('rowheader').allTextContents();

describeInBrowser('the dashboard in test mode', () => {
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  it(
    'the switch on: the banner on every page and test data only, across a reload; off (or Leave test mode): live data only, no banner',
    { timeout: 120_000 },
    async () => {
      const m = await merchant();
      const { page } = m;
      await withFailureScreenshots(page, 'test-mode-switch', async () => {
        await page.getByRole('link', { name: 'Affiliates' }).click();
        await expect.poll(() => affiliateNames(page), POLL).toEqual([expect.stringContaining('Live Larry')]);
        expect(await banner(page).count()).toBe(0);
        expect(await modeSwitch(page).getAttribute('aria-checked')).toBe('false');

        // On: the page loads again, with test data only, and the banner says so.
        const requests: string[] = [];
        page.on('request', (r) => {
          if (new URL(r.url()).pathname.startsWith('/api/'))
            requests.push(`${new URL(r.url()).pathname} ${r.headers()['x-mode'] ?? '-'}`);
        });
        await modeSwitch(page).click();
        expect(await modeSwitch(page).getAttribute('aria-checked')).toBe('true');
        await expect.poll(() => banner(page).textContent(), POLL).toContain(BANNER);
        await expect.poll(() => affiliateNames(page), POLL).toEqual([expect.stringContaining('Test Tina')]);
        expect(requests.filter((r) => r.startsWith('/api/affiliates'))).not.toHaveLength(0);
        expect(requests.filter((r) => !r.endsWith(' test'))).toEqual([]);
        await shoot(page, 'affiliates-test-mode');

        // Every page: the banner, and nothing sideways on a phone.
        const problems: string[] = [];
        for (const path of PAGES) {
          for (const viewport of [DESKTOP, NARROW]) {
            await page.setViewportSize(viewport);
            await page.goto(`${base}/dashboard/${path}`);
            await page.locator('main h1').waitFor();
            expect(await banner(page).textContent(), `${path} @${viewport.width}`).toContain(BANNER);
            await page.waitForLoadState('networkidle');
            if (viewport === NARROW) problems.push(...(await sidewaysScrolling(page)).map((p) => `${path} @390: ${p}`));
            else problems.push(...(await seriousViolations(page)).map((v) => `${path}: ${v}`));
          }
        }
        expect(problems).toEqual([]);
        await page.setViewportSize(DESKTOP);

        // The overview's figures are the test data's: one sale of 100, Tina's.
        await page.goto(`${base}/dashboard/overview`);
        const top = page.getByRole('region', { name: 'Top affiliates' });
        await expect.poll(() => top.textContent(), POLL).toContain('Test Tina');
        expect(await top.textContent()).not.toContain('Live Larry');
        await shoot(page, 'overview-test-mode');

        // A reload keeps test mode (the tab's sessionStorage).
        await page.goto(`${base}/dashboard/affiliates`);
        await page.reload();
        await expect.poll(() => affiliateNames(page), POLL).toEqual([expect.stringContaining('Test Tina')]);
        expect(await banner(page).count()).toBe(1);

        // Leave test mode from the banner: live data, no banner, no header.
        requests.length = 0;
        await banner(page).getByRole('button', { name: 'Leave test mode' }).click();
        await expect.poll(() => affiliateNames(page), POLL).toEqual([expect.stringContaining('Live Larry')]);
        expect(await banner(page).count()).toBe(0);
        expect(requests.filter((r) => r.endsWith(' test'))).toEqual([]);
        await page.reload();
        await expect.poll(() => affiliateNames(page), POLL).toEqual([expect.stringContaining('Live Larry')]);

        // A new tab opens in live mode, whatever another tab shows.
        await modeSwitch(page).click();
        await banner(page).waitFor();
        const other = await m.context.newPage();
        await other.goto(`${base}/dashboard/affiliates`);
        await expect.poll(() => affiliateNames(other), POLL).toEqual([expect.stringContaining('Live Larry')]);
        expect(await banner(other).count()).toBe(0);
        expect(m.errors).toEqual([]);
      });
      await m.context.close();
    },
  );

  it(
    'Delete all test data: only in test mode, confirmed with "Live data is untouched", then the counts; live data stays',
    { timeout: 90_000 },
    async () => {
      const m = await merchant();
      const { page } = m;
      await withFailureScreenshots(page, 'test-mode-reset', async () => {
        await page.getByRole('link', { name: 'Developers' }).click();
        await page.getByRole('heading', { name: 'Developers' }).waitFor();
        expect(await page.getByRole('button', { name: 'Delete all test data' }).count()).toBe(0);
        await modeSwitch(page).click();
        await page.getByRole('button', { name: 'Delete all test data' }).click();
        const dialog = page.getByRole('dialog');
        await expect.poll(() => dialog.textContent(), POLL).toContain('Live data is untouched');
        await shoot(page, 'delete-test-data-confirm');
        await dialog.getByRole('button', { name: 'Delete all test data' }).click();
        const deleted = page.getByTestId('test-data-deleted');
        await expect.poll(() => deleted.textContent(), POLL).toContain('Test data deleted.');
        const text = (await deleted.textContent())!;
        expect(text).toContain('affiliates: 1');
        expect(text).toContain('programs: 1');
        expect(text).toContain('conversions: 1');
        await shoot(page, 'delete-test-data-done');

        expect((await call(base, 'GET', '/api/affiliates', { headers: m.test })).body.data.affiliates).toEqual([]);
        expect(
          (await call(base, 'GET', '/api/affiliates', { headers: m.live })).body.data.affiliates.map(
            (a: { name: string }) => a.name,
          ),
        ).toEqual(['Live Larry']);
        await page.getByRole('link', { name: 'Affiliates' }).click();
        // The test program went too: the page starts again from its first step.
        await expect.poll(() => page.locator('main').textContent(), POLL).toContain('Create a program first');
        expect(m.errors).toEqual([]);
      });
      await m.context.close();
    },
  );

  it(
    'Developers in test mode: the test keys with their mode (asked of the API by mode, so a page of live keys hides none), and Create test API key issues a svc_test_ key',
    { timeout: 90_000 },
    async () => {
      const m = await merchant();
      const { page } = m;
      // A full page of live keys (50) issued after the first test keys, then one more test key: by
      // creation order it is on the API's second page of both modes.
      for (let i = 0; i < 50; i++)
        expect((await call(base, 'POST', '/api/api-keys', { headers: m.live })).status).toBe(201);
      // Issued by the owner in test mode (a test key manages no keys: common/access.ts).
      const lateTestKey = (
        await call(base, 'POST', '/api/api-keys', { headers: { ...session(base, m.owner.cookie), 'x-mode': 'test' } })
      ).body.data.api_key_info.redacted as string;
      await withFailureScreenshots(page, 'test-mode-keys', async () => {
        await page.getByRole('link', { name: 'Developers' }).click();
        const keys = page.locator('.table-wrap[aria-label="API keys"]');
        await expect.poll(() => keys.getByRole('row').count(), POLL).toBeGreaterThan(1);
        expect(await keys.textContent()).toContain('live');
        expect(await keys.textContent()).not.toContain('svc_test_');
        // 51 live keys: a page of 50 live keys, then the next page.
        expect(await keys.getByRole('row').count()).toBe(51);
        expect(await page.getByRole('button', { name: 'Next' }).isEnabled()).toBe(true);
        await modeSwitch(page).click();
        await page.getByRole('heading', { name: 'Test API keys' }).waitFor();
        await expect.poll(() => keys.textContent(), POLL).toContain(lateTestKey);
        expect(await keys.textContent()).not.toMatch(/\blive\b/);
        // Every test key on one page (the sign-up's, the operator's, the late one): no other page.
        expect(await keys.getByRole('row').count()).toBe(4);
        expect(await page.getByRole('navigation', { name: 'Pages' }).count()).toBe(0);
        await page.getByRole('button', { name: 'Create test API key' }).click();
        const issued = (await page.getByTestId('new-api-key').textContent())!;
        expect(issued).toMatch(/^svc_test_/);
        expect(
          (
            await call(base, 'GET', '/api/affiliates', { headers: { authorization: `Bearer ${issued}` } })
          ).body.data.affiliates.map((a: { name: string }) => a.name),
        ).toEqual(['Test Tina']);
        expect(await page.locator('pre.code').first().textContent()).toContain('data-mode="test"');
        await shoot(page, 'developers-test-mode');
        expect(m.errors).toEqual([]);
      });
      await m.context.close();
    },
  );

  it(
    'Get started begins by turning test mode on; its samples use the test key and data-mode="test"; it ends with Go live',
    { timeout: 90_000 },
    async () => {
      const m = await merchant();
      const { page } = m;
      await withFailureScreenshots(page, 'test-mode-get-started', async () => {
        await page.getByRole('link', { name: 'Get started' }).click();
        const first = page.getByRole('region', { name: 'Turn on test mode' });
        await first.getByRole('button', { name: 'Turn on test mode' }).click();
        await banner(page).waitFor();
        await page.getByRole('region', { name: 'Turn on test mode (done)' }).waitFor();
        const capture = page.getByRole('region', { name: 'Capture the referral on your site' });
        await capture.getByRole('tab', { name: 'Snippet tag' }).click();
        expect(await capture.getByRole('tabpanel').textContent()).toContain(
          `data-organization="${m.owner.organization.id}" data-mode="test"`,
        );
        const signup = page.getByRole('region', { name: 'At signup, record the customer' });
        // The README's name for the key (AFFILIATE_API_KEY), in every sample and in the steps' text.
        expect(await signup.getByRole('tabpanel').textContent()).toContain('AFFILIATE_API_KEY=svc_test_');
        for (const tab of ['Node.js SDK', 'Python', 'PHP']) {
          await signup.getByRole('tab', { name: tab }).click();
          expect(await signup.getByRole('tabpanel').textContent()).toContain('AFFILIATE_API_KEY');
        }
        await capture.getByRole('tab', { name: 'Express' }).click();
        expect(await capture.getByRole('tabpanel').textContent()).toContain('process.env.AFFILIATE_API_KEY');
        expect(await page.locator('main').textContent()).not.toContain('SVC_API_KEY');
        // The test affiliate's link: the checklist shows test data.
        await expect
          .poll(() => page.locator('main').textContent(), POLL)
          .toContain('https://shop.example.com/?ref=tina');
        const live = page.getByRole('region', { name: 'Go live' });
        expect(await live.textContent()).toContain('Remove data-mode="test"');
        await shoot(page, 'get-started-test-mode');
        await live.getByRole('button', { name: 'Leave test mode' }).click();
        expect(await banner(page).count()).toBe(0);
        expect(m.errors).toEqual([]);
      });
      await m.context.close();
    },
  );

  it(
    'Send in test mode: the confirmation says nothing moves, and the payout is paid at once, marked simulated',
    { timeout: 90_000 },
    async () => {
      const m = await merchant();
      const { page } = m;
      await withFailureScreenshots(page, 'test-mode-send', async () => {
        const patched = await call(base, 'PATCH', `/api/affiliates/${m.testAffiliate.id}`, {
          headers: m.test,
          body: { payout_method: 'paypal', payout_email: 'tina-paypal@partners.example' },
        });
        expect(patched.status).toBe(200);
        const pending = await call(base, 'GET', '/api/commissions?status=pending', { headers: m.test });
        for (const c of pending.body.data.commissions)
          expect((await call(base, 'POST', `/api/commissions/${c.id}/approve`, { headers: m.test })).status).toBe(200);
        const created = await call(base, 'POST', '/api/payouts', { headers: m.test, body: {} });
        expect(created.body.data.payouts).toHaveLength(1);

        await modeSwitch(page).click();
        await banner(page).waitFor();
        await page.getByRole('link', { name: 'Commissions & payouts' }).click();
        const payouts = page.locator('.table-wrap[aria-label="Payouts"]');
        const row = payouts.getByRole('row', { name: /\$20\.00/ });
        await row.getByRole('checkbox').check();
        await page.getByRole('button', { name: 'Send 1 selected' }).click();
        const dialog = page.getByRole('dialog');
        await expect
          .poll(() => dialog.textContent(), POLL)
          .toContain('Test mode: nothing reaches a provider and no money moves.');
        expect(await dialog.textContent()).not.toContain('This moves money');
        await shoot(page, 'send-test-mode-confirm');
        await dialog.getByRole('button', { name: 'Send' }).click();
        await page.getByRole('combobox', { name: 'Status' }).last().selectOption('paid');
        await expect
          .poll(() => payouts.getByRole('row', { name: /\$20\.00/ }).textContent(), POLL)
          .toContain('simulated');
        const sent = await call(base, 'GET', `/api/payouts/${created.body.data.payouts[0].id}`, { headers: m.test });
        expect(sent.body.data.payout).toMatchObject({ status: 'paid', simulated: true, livemode: false });
        expect(m.errors).toEqual([]);
      });
      await m.context.close();
    },
  );

  it(
    'Preview portal (test mode): a new tab signed in to the portal as the test partner, with the preview banner',
    { timeout: 90_000 },
    async () => {
      const m = await merchant();
      const { page } = m;
      await withFailureScreenshots(page, 'test-mode-preview', async () => {
        await page.goto(`${base}/dashboard/affiliates/${m.liveAffiliate.id}`);
        await page.getByRole('heading', { name: 'Live Larry' }).waitFor();
        expect(await page.getByRole('button', { name: 'Preview portal' }).count()).toBe(0);
        await modeSwitch(page).click();
        await page.goto(`${base}/dashboard/affiliates/${m.testAffiliate.id}`);
        await page.getByRole('heading', { name: 'Test Tina' }).waitFor();
        await shoot(page, 'affiliate-test-mode');
        const answered = page.waitForResponse((r) =>
          r.url().endsWith(`/api/affiliates/${m.testAffiliate.id}/portal-preview`),
        );
        const [portal] = await Promise.all([
          m.context.waitForEvent('page'),
          page.getByRole('button', { name: 'Preview portal' }).click(),
        ]);
        const { url } = ((await (await answered).json()) as { data: { url: string } }).data;
        await portal.getByRole('heading', { name: 'Hello, Test Tina' }).waitFor({ timeout: 15_000 });
        expect(new URL(portal.url()).pathname).toMatch(/^\/portal\/[0-9a-f-]{36}$/);
        const preview = portal.getByRole('region', { name: 'Preview', exact: true });
        await expect.poll(() => preview.textContent(), POLL).toContain('Preview of Test Tina in test mode');
        expect(await portal.getByTestId('referral-link').textContent()).toBe('https://shop.example.com/?ref=tina');
        await portal.waitForLoadState('networkidle');
        expect(await seriousViolations(portal)).toEqual([]);
        await shoot(portal, 'portal-preview');
        // The link works once: opened again (in a browser of its own, without the session), it says so.
        const stranger = await browser.newContext({ viewport: NARROW });
        const again = await stranger.newPage();
        await again.goto(url);
        await again.getByRole('heading', { name: 'This preview link no longer works' }).waitFor();
        await stranger.close();
        expect(m.errors).toEqual([]);
      });
      await m.context.close();
    },
  );
});
