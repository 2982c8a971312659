import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumForBlock, describeInBrowser } from '../snippet/support/browser.js';
import {
  buildDashboard,
  DESKTOP,
  pageErrors,
  PHONE,
  screenshots,
  seriousViolations,
  sidewaysScrolling,
  signedInPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession, session, startService, type PeopleServer } from './support/people.js';

/**
 * The dashboard's "Test e-mails" page in Chromium: in test mode (the dashboard's switch keeps the
 * mode in sessionStorage, web/src/mode.ts, and sends X-Mode: test), the e-mails test data would
 * have sent are listed with their links; in live mode neither the page nor its nav entry exists.
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

describeInBrowser('the Test e-mails page', () => {
  const browser = chromiumForBlock();

  it(
    'lists in test mode what the test data would have e-mailed, with its links; absent in live mode',
    { timeout: 120_000 },
    async () => {
      const owner = await ownerSession(base);
      // Test data, made by the dashboard session in test mode, as the dashboard's own requests are.
      const inTest = { ...session(base, owner.cookie), 'x-mode': 'test' };
      const program = await call(base, 'POST', '/api/programs', {
        headers: inTest,
        body: { name: 'Partners', commission_value: 20 },
      });
      expect(program.status, JSON.stringify(program.body)).toBe(201);
      const affiliate = await call(base, 'POST', '/api/affiliates', {
        headers: inTest,
        body: { email: 'tess@partners.example', program_id: program.body.data.program.id, slug: 'tess' },
      });
      expect(affiliate.status).toBe(201);
      expect(
        (
          await call(base, 'POST', `/api/affiliates/${affiliate.body.data.affiliate.id}/invitation`, {
            headers: inTest,
          })
        ).status,
      ).toBe(202);

      const { context, page } = await signedInPage(browser(), base, owner.cookie);
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'test-emails', async () => {
        // Live mode: no nav entry, and the path is no page.
        await page.goto(`${base}/dashboard/overview`);
        await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Overview' }).waitFor();
        expect(
          await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Test e-mails' }).count(),
        ).toBe(0);
        await page.goto(`${base}/dashboard/test-emails`);
        await page.getByRole('heading', { name: 'Not found' }).waitFor();

        // Test mode, as the dashboard's switch leaves it.
        await page.evaluate(() => sessionStorage.setItem('svc.dashboard-mode', 'test'));
        await page.goto(`${base}/dashboard/overview`);
        await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Test e-mails' }).click();
        await page.getByRole('heading', { name: 'Test e-mails' }).waitFor();
        const row = page
          .getByRole('region', { name: 'Test e-mails' })
          .getByRole('row', { name: /tess@partners\.example/ });
        await expect.poll(() => row.textContent(), POLL).toMatch(/invites you to its partner portal/);
        const link = row.getByRole('link', { name: /\/portal\/[0-9a-f-]{36}\/sign-in\/link\?token=/ });
        expect(await link.getAttribute('href')).toMatch(
          /^http:\/\/127\.0\.0\.1:\d+\/portal\/[0-9a-f-]{36}\/sign-in\/link\?token=[A-Za-z0-9_-]+$/,
        );

        const problems: string[] = [];
        for (const viewport of [DESKTOP, PHONE]) {
          await page.setViewportSize(viewport);
          await page.waitForTimeout(150);
          problems.push(...(await seriousViolations(page)).map((v) => `@${viewport.width}: ${v}`));
          if (viewport === PHONE)
            problems.push(...(await sidewaysScrolling(page)).map((p) => `@${viewport.width}: ${p}`));
          else {
            const overflow = await page.evaluate(
              () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
            );
            if (overflow > 0) problems.push(`@${viewport.width}: scrolls sideways by ${overflow}px`);
          }
        }
        if (process.env.TEST_EMAILS_SCREENSHOTS)
          await screenshots(page, process.env.TEST_EMAILS_SCREENSHOTS, 'test-emails');
        expect(problems).toEqual([]);
      });
      expect(errors).toEqual([]);
      await context.close();
    },
  );
});
