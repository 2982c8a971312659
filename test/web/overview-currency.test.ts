import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumForBlock, describeInBrowser } from '../snippet/support/browser.js';
import {
  buildDashboard,
  DESKTOP,
  pageErrors,
  PHONE,
  signedInPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession, startService, type PeopleServer } from './support/people.js';

/**
 * The Overview opens on the organization's main currency (the most conversions, then clicks and
 * signups, then the oldest program's), not on the alphabetically first: a USD program with a
 * euro program beside it opened on EUR with "Clicks 0, Signups 0".
 */
const POLL = { timeout: 10_000 };

let service: PeopleServer;
let base: string;

beforeAll(async () => {
  buildDashboard();
  service = await startService();
  base = service.baseUrl;
}, 120_000);
afterAll(() => service?.close());

async function program(key: Record<string, string>, name: string, currency: string): Promise<string> {
  const res = await call(base, 'POST', '/api/programs', {
    headers: key,
    body: { name, currency, commission_value: 20, hold_days: 0 },
  });
  expect(res.status).toBe(201);
  return res.body.data.program.id as string;
}

describeInBrowser('the Overview currency', () => {
  const browser = chromiumForBlock();

  it(
    'opens on the currency with the conversions, though an older euro program sorts first',
    { timeout: 90_000 },
    async () => {
      const owner = await ownerSession(base, 'Dollar Shop');
      const key = { authorization: `Bearer ${owner.apiKey}` };
      await program(key, 'Euro resellers', 'EUR');
      const usd = await program(key, 'Main programme', 'USD');
      expect(
        (
          await call(base, 'POST', '/api/affiliates', {
            headers: key,
            body: { email: 'ada@example.com', program_id: usd, slug: 'ada' },
          })
        ).status,
      ).toBe(201);
      expect((await call(base, 'POST', '/api/clicks', { headers: key, body: { ref: 'ada' } })).status).toBe(201);
      expect(
        (
          await call(base, 'POST', '/api/conversions', {
            headers: key,
            body: { external_id: 'o-1', amount: 80, ref: 'ada' },
          })
        ).status,
      ).toBe(201);

      const { context, page } = await signedInPage(browser(), base, owner.cookie);
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'overview-currency', async () => {
        await page.goto(`${base}/dashboard/overview`);
        await expect.poll(() => page.getByLabel('Currency').inputValue(), POLL).toBe('USD');
        await expect.poll(() => page.locator('.kpi', { hasText: 'Conversions' }).innerText(), POLL).toContain('1');
        await expect
          .poll(() => page.locator('.kpi', { hasText: 'Gross revenue' }).innerText(), POLL)
          .toContain('$80.00');
        // The other currency is still one choice away.
        await page.getByLabel('Currency').selectOption('EUR');
        await expect
          .poll(() => page.locator('.kpi', { hasText: 'Gross revenue' }).innerText(), POLL)
          .toContain('€0.00');
        for (const [label, viewport] of [
          ['1280', DESKTOP],
          ['390', { ...PHONE, width: 390 }],
        ] as const) {
          await page.setViewportSize(viewport);
          await page.getByLabel('Currency').selectOption('USD');
          await page.waitForTimeout(300);
          await page
            .screenshot({ path: `/work/shots-5/overview-currency-${label}.png`, fullPage: true })
            .catch(() => undefined);
        }
      });
      expect(errors).toEqual([]);
      await context.close();
    },
  );

  it("with no activity yet, opens on the oldest program's currency", { timeout: 60_000 }, async () => {
    const owner = await ownerSession(base, 'Quiet Shop');
    const key = { authorization: `Bearer ${owner.apiKey}` };
    await program(key, 'Main programme', 'USD');
    await program(key, 'Euro resellers', 'EUR');
    const { context, page } = await signedInPage(browser(), base, owner.cookie);
    await withFailureScreenshots(page, 'overview-currency-quiet', async () => {
      await page.goto(`${base}/dashboard/overview`);
      await expect.poll(() => page.getByLabel('Currency').inputValue(), POLL).toBe('USD');
    });
    await context.close();
  });
});
