import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumForBlock, describeInBrowser } from '../snippet/support/browser.js';
import { startRewardfulStandin, type Standin } from '../imports/rewardful-standin.js';
import {
  buildDashboard,
  capture,
  DESKTOP,
  pageErrors,
  seriousViolations,
  sidewaysScrolling,
  signedInPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession, startService, type PeopleServer } from './support/people.js';

/**
 * The Imports page with a source whose campaign terms differ from the program's (Rewardful's
 * campaigns: https://developers.rewardful.com/rest-api/campaigns/the-campaign-object): the dry run
 * lists the differences and offers both choices; the import run keeping the program's terms says so;
 * undone, it stays in the list as undone. At 1280 and 390 px.
 */
let service: PeopleServer;
let standin: Standin;
let base: string;

beforeAll(async () => {
  buildDashboard();
  standin = await startRewardfulStandin('terms-secret', {
    affiliates: [
      { id: 'a1', email: 'ada@example.com', first_name: 'Ada', state: 'active', links: [{ id: 'l1', token: 'ada' }] },
    ],
    referrals: [],
    payouts: [],
    commissions: [],
    campaigns: [
      {
        id: 'camp-1',
        name: 'Partners',
        reward_type: 'percent',
        commission_percent: 25,
        minimum_payout_cents: 5000,
        minimum_payout_currency: 'USD',
        max_commission_period_months: 12,
        max_commissions: null,
        days_before_referrals_expire: 60,
        days_until_commissions_are_due: 45,
      },
    ],
  });
  process.env.IMPORT_REWARDFUL_API_BASE_URL = standin.url;
  service = await startService();
  base = service.baseUrl;
}, 120_000);
afterAll(async () => {
  delete process.env.IMPORT_REWARDFUL_API_BASE_URL;
  await service?.close();
  await standin?.close();
});

describeInBrowser('the Imports page and campaign terms', () => {
  const browser = chromiumForBlock();

  it(
    'lists the terms that differ, runs the import keeping the program’s, and keeps an undone import listed',
    {
      timeout: 120_000,
    },
    async () => {
      const owner = await ownerSession(base);
      const auth = { authorization: `Bearer ${owner.apiKey}` };
      expect(
        (await call(base, 'POST', '/api/programs', { headers: auth, body: { name: 'Main', commission_value: 20 } }))
          .status,
      ).toBe(201);
      const { context, page } = await signedInPage(browser(), base, owner.cookie);
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'imports-terms', async () => {
        await page.goto(`${base}/dashboard/imports`);
        await page.getByLabel('Rewardful API secret').fill('terms-secret');
        await page.getByRole('button', { name: 'Dry run' }).click();
        const report = page.getByRole('region', { name: 'Dry run' });
        await report.getByText('succeeded').waitFor({ timeout: 60_000 });
        const terms = report.getByRole('region', { name: 'Campaign terms' });
        await expect(terms.locator('tbody tr', { hasText: 'commission_value' }).textContent()).resolves.toMatch(
          /Partners\s*commission_value\s*25\s*20/,
        );
        await capture(page, 'imports-terms-dry-run');
        expect(await seriousViolations(page)).toEqual([]);
        await page.setViewportSize({ width: 390, height: 800 });
        expect(await sidewaysScrolling(page)).toEqual([]);
        await page.setViewportSize(DESKTOP);

        await report.getByRole('button', { name: 'Run the import, keeping the program’s terms' }).click();
        const run = page.getByRole('region', { name: 'Import', exact: true });
        await run.getByText('succeeded').waitFor({ timeout: 60_000 });
        await run.getByText('The program kept its own terms').waitFor();
        const program = (await call(base, 'GET', '/api/programs', { headers: auth })).body.data.programs[0];
        expect(program.commission_value).toBe(20);

        const history = page.getByRole('region', { name: 'Past imports' });
        await history
          .locator('tbody tr', { hasText: 'rewardful' })
          .first()
          .getByRole('button', { name: 'Undo' })
          .click();
        await page.getByRole('dialog').getByRole('button', { name: 'Undo import' }).click();
        await history.getByText('undone').waitFor();
        await run.getByText(/undone .*: what it created was removed/).waitFor();
        await capture(page, 'imports-undone');
        expect(await seriousViolations(page)).toEqual([]);
        await page.setViewportSize({ width: 390, height: 800 });
        expect(await sidewaysScrolling(page)).toEqual([]);
        const listed = (await call(base, 'GET', '/api/imports', { headers: auth })).body.data.imports;
        expect(listed.map((i: { status: string; dry_run: boolean }) => [i.status, i.dry_run])).toEqual([
          ['undone', false],
          ['succeeded', true],
        ]);
      });
      expect(errors).toEqual([]);
      await context.close();
    },
  );
});
