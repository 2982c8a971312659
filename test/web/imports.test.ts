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
 * The Imports page in Chromium: a dry run from a Rewardful stand-in (test/imports/rewardful-standin.ts,
 * Rewardful's documented API: https://developers.rewardful.com/rest-api/overview), its counts and
 * what it would skip and why, then the real run and its progress, on a wide screen and a phone.
 */
let service: PeopleServer;
let standin: Standin;
let base: string;

const link = (token: string) => ({
  id: `l-${token}`,
  url: `https://example.com/?via=${token}`,
  token,
  visitors: 0,
  leads: 0,
  conversions: 0,
});

beforeAll(async () => {
  buildDashboard();
  standin = await startRewardfulStandin('web-secret', {
    affiliates: [
      {
        id: 'a1',
        email: 'ada@example.com',
        first_name: 'Ada',
        last_name: 'L',
        state: 'active',
        paypal_email: null,
        links: [link('ada'), link('ada-two')],
      },
      {
        id: 'a2',
        email: 'missing-at-sign',
        first_name: 'No',
        last_name: 'Mail',
        state: 'active',
        paypal_email: null,
        links: [link('nomail')],
      },
    ],
    referrals: [],
    payouts: [],
    commissions: [
      {
        id: 'c1',
        amount: 500,
        currency: 'EUR',
        state: 'due',
        due_at: '2024-02-01T00:00:00.000Z',
        paid_at: null,
        voided_at: null,
        sale: {
          id: 's1',
          currency: 'EUR',
          charged_at: '2024-01-01T00:00:00.000Z',
          sale_amount_cents: 2500,
          refund_amount_cents: 0,
          referral: { id: 'r1', customer: { id: 'cus_9', email: 'c@example.com', name: 'C' }, affiliate: { id: 'a1' } },
        },
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

describeInBrowser('the Imports page', () => {
  const browser = chromiumForBlock();

  it(
    'runs a dry run, shows what it would create and skip and why, then runs the import and follows it, at 1280 and 390 px',
    { timeout: 120_000 },
    async () => {
      const owner = await ownerSession(base);
      const program = await call(base, 'POST', '/api/programs', {
        headers: { authorization: `Bearer ${owner.apiKey}` },
        body: { name: 'Main', commission_value: 20 },
      });
      expect(program.status).toBe(201);
      const { context, page } = await signedInPage(browser(), base, owner.cookie);
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'imports', async () => {
        await page.goto(`${base}/dashboard/imports`);
        await page.getByRole('link', { name: 'Imports' }).waitFor();
        await page.getByLabel('Rewardful API secret').fill('web-secret');
        await page.getByRole('button', { name: 'Dry run' }).click();
        const report = page.getByRole('region', { name: 'Dry run' });
        await report.getByText('succeeded').waitFor({ timeout: 60_000 });
        const counts = report.getByRole('region', { name: 'What the import would do' });
        await expect(counts.locator('tbody tr', { hasText: 'affiliates' }).textContent()).resolves.toMatch(
          /affiliates\s*1\s*0\s*1/,
        );
        await expect(report.getByRole('region', { name: 'Skipped rows' }).textContent()).resolves.toContain(
          'no valid e-mail ("missing-at-sign")',
        );
        await capture(page, 'imports-dry-run');
        expect(await seriousViolations(page)).toEqual([]);
        await page.setViewportSize({ width: 390, height: 800 });
        expect(await sidewaysScrolling(page)).toEqual([]);
        await page.setViewportSize(DESKTOP);
        // Nothing written by the dry run.
        expect(
          (await call(base, 'GET', '/api/affiliates', { headers: { authorization: `Bearer ${owner.apiKey}` } })).body
            .data.affiliates,
        ).toEqual([]);

        await report.getByRole('button', { name: 'Run the import' }).click();
        const run = page.getByRole('region', { name: 'Import', exact: true });
        await run.getByText('succeeded').waitFor({ timeout: 60_000 });
        await expect(
          run
            .getByRole('region', { name: 'What the import did' })
            .locator('tbody tr', { hasText: 'commissions' })
            .textContent(),
        ).resolves.toMatch(/commissions\s*1\s*0\s*0/);
        await capture(page, 'imports-done');
        const affiliates = (
          await call(base, 'GET', '/api/affiliates', { headers: { authorization: `Bearer ${owner.apiKey}` } })
        ).body.data.affiliates;
        expect(affiliates.map((a: { slug: string }) => a.slug)).toEqual(['ada']);
        await page.getByRole('region', { name: 'Past imports' }).getByText('rewardful (dry run)').waitFor();

        // Every source the API imports from is offered, each with the credentials it names; one left
        // empty is named by the API's answer next to its field.
        const source = page.getByLabel('Source');
        for (const [label, fields] of [
          ['Tolt (API)', ['Tolt API key', 'Tolt program id']],
          ['FirstPromoter (API)', ['FirstPromoter API key', 'FirstPromoter account id', 'Account currency (optional)']],
          ['PartnerStack (API)', ['PartnerStack public key', 'PartnerStack secret key']],
          ['Tapfiliate (API)', ['Tapfiliate API key']],
        ] as const) {
          await source.selectOption({ label });
          for (const field of fields) await page.getByLabel(field).waitFor();
        }
        await page.getByRole('button', { name: 'Dry run' }).click();
        await page
          .getByText(/Required \(Tapfiliate API key\)/)
          .first()
          .waitFor();
      });
      expect(errors).toEqual([]);
      await context.close();
    },
  );

  it('shows an import waiting to try its failing source again, and cancels it', { timeout: 120_000 }, async () => {
    const owner = await ownerSession(base);
    const program = await call(base, 'POST', '/api/programs', {
      headers: { authorization: `Bearer ${owner.apiKey}` },
      body: { name: 'Main', commission_value: 20 },
    });
    expect(program.status).toBe(201);
    standin.failures.set('/v1/affiliates?page=1', 1000);
    const { context, page } = await signedInPage(browser(), base, owner.cookie);
    const errors = pageErrors(page);
    try {
      await withFailureScreenshots(page, 'imports-cancel', async () => {
        await page.goto(`${base}/dashboard/imports`);
        await page.getByLabel('Rewardful API secret').fill('web-secret');
        await page.getByRole('button', { name: 'Dry run' }).click();
        const report = page.getByRole('region', { name: 'Dry run' });
        await report
          .getByText(/Rewardful answered HTTP 500: trying again at .* \(try 2 of 6\)/)
          .waitFor({ timeout: 30_000 });
        await capture(page, 'imports-waiting');
        expect(await seriousViolations(page)).toEqual([]);
        await report.getByRole('button', { name: 'Cancel import' }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel import' }).click();
        await report.getByText('cancelled').first().waitFor();
        await capture(page, 'imports-cancelled');
        await page.getByRole('region', { name: 'Past imports' }).getByText('cancelled').waitFor();
        const listed = (
          await call(base, 'GET', '/api/imports', { headers: { authorization: `Bearer ${owner.apiKey}` } })
        ).body.data.imports;
        expect(listed.map((i: { status: string; error: string | null }) => [i.status, i.error])).toEqual([
          ['cancelled', null],
        ]);
      });
      expect(errors).toEqual([]);
    } finally {
      standin.failures.delete('/v1/affiliates?page=1');
      await context.close();
    }
  });
});
