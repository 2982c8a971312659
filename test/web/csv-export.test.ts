import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumForBlock, describeInBrowser } from '../snippet/support/browser.js';
import {
  buildDashboard,
  DESKTOP,
  pageErrors,
  sidewaysScrolling,
  signedInPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession, startService, type PeopleServer } from './support/people.js';

/** "Export CSV" on the Affiliates, Commissions and Customers pages downloads the service's streamed file. */
let service: PeopleServer;
let base: string;

beforeAll(async () => {
  buildDashboard();
  service = await startService();
  base = service.baseUrl;
}, 120_000);
afterAll(() => service?.close());

describeInBrowser('CSV exports from the dashboard', () => {
  const browser = chromiumForBlock();

  it(
    'downloads affiliates, commissions and conversions, with orders and customers, formulas inert',
    { timeout: 120_000 },
    async () => {
      const owner = await ownerSession(base, 'Export Shop');
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const program = (
        await call(base, 'POST', '/api/programs', {
          headers: key,
          body: { name: 'Main', commission_value: 10, hold_days: 0 },
        })
      ).body.data.program;
      const created = await call(base, 'POST', '/api/affiliates', {
        headers: key,
        body: { email: 'zoe@example.com', name: '@Zoë, "Z"', program_id: program.id, slug: 'zoe' },
      });
      expect(created.status).toBe(201);
      expect(
        (
          await call(base, 'POST', '/api/conversions', {
            headers: key,
            body: { external_id: 'order-42', amount: 200, customer_id: 'cust-7', ref: 'zoe' },
          })
        ).status,
      ).toBe(201);

      const { context, page } = await signedInPage(browser(), base, owner.cookie, { acceptDownloads: true });
      const errors = pageErrors(page);
      const download = async (path: string, kind: string) => {
        await page.goto(`${base}/dashboard/${path}`);
        const [file] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('link', { name: `Export CSV of ${kind}` }).click(),
        ]);
        expect(file.suggestedFilename()).toMatch(new RegExp(`^${kind}-\\d{4}-\\d{2}-\\d{2}\\.csv$`));
        return parse<Record<string, string>>(readFileSync(await file.path(), 'utf8'), { columns: true });
      };
      await withFailureScreenshots(page, 'csv-export', async () => {
        const affiliates = await download('affiliates', 'affiliates');
        expect(affiliates.map((a) => [a.email, a.name, a.slug])).toEqual([['zoe@example.com', `'@Zoë, "Z"`, 'zoe']]);
        for (const [label, viewport] of [
          ['1280', DESKTOP],
          ['390', { width: 390, height: 844 }],
        ] as const) {
          await page.setViewportSize(viewport);
          await page.waitForTimeout(200);
          await page.screenshot({ path: `/work/shots-5/export-affiliates-${label}.png` });
        }
        // On a phone nothing scrolls sideways. (At 1280 px the Affiliates table's "Last 30 days"
        // figures already overflow its frame once an affiliate has a sale: older than this button.)
        expect(await sidewaysScrolling(page)).toEqual([]);
        await page.setViewportSize(DESKTOP);
        const commissions = await download('commissions', 'commissions');
        expect(commissions.map((c) => [c.order_id, c.customer_id, c.amount, c.status, c.approved_at !== ''])).toEqual([
          ['order-42', 'cust-7', '20.00', 'approved', true],
        ]);
        const conversions = await download('customers', 'conversions');
        expect(conversions.map((c) => [c.order_id, c.customer_id, c.amount, c.affiliate_email])).toEqual([
          ['order-42', 'cust-7', '200.00', 'zoe@example.com'],
        ]);
        await page.setViewportSize({ width: 390, height: 844 });
        await page.waitForTimeout(200);
        await page.screenshot({ path: '/work/shots-5/export-conversions-390.png' });
        expect(await sidewaysScrolling(page)).toEqual([]);
        expect(errors).toEqual([]);
      });
      await context.close();
    },
  );
});
