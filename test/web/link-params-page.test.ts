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
import { call, ownerSession, session, startService, type PeopleServer } from './support/people.js';

/**
 * The Developers page's "Link parameters" (issue 47, item 4): the merchant sees which query
 * parameters attribute a visit, adds `via`, and is told plainly what is refused.
 */
const PHONE_390 = { width: 390, height: 844 };
let service: PeopleServer;
let base: string;

beforeAll(async () => {
  buildDashboard();
  service = await startService();
  base = service.baseUrl;
}, 120_000);
afterAll(() => service?.close());

describeInBrowser('the Link parameters section', () => {
  const browser = chromiumForBlock();

  it(
    'shows ?ref=, saves "ref, via", and says why an empty or unsafe list is refused',
    { timeout: 120_000 },
    async () => {
      const owner = await ownerSession(base);
      const { context, page } = await signedInPage(browser(), base, owner.cookie);
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'link-params', async () => {
        await page.goto(`${base}/dashboard/developers`);
        const section = page.getByRole('region', { name: 'Link parameters' });
        await section.getByText('?ref=').waitFor();
        const field = section.getByLabel('Parameters');
        expect(await field.inputValue()).toBe('ref');

        await field.fill('ref, via');
        await section.getByRole('button', { name: 'Save link parameters' }).click();
        await section.getByRole('status').getByText('Saved.').waitFor();
        await section.getByText('?via=').waitFor();
        const stored = await call(base, 'GET', '/api/link-params', { headers: session(base, owner.cookie) });
        expect(stored.body.data.link_params).toEqual(['ref', 'via']);

        await field.fill('');
        await section.getByRole('button', { name: 'Save link parameters' }).click();
        await section
          .getByRole('alert')
          .getByText(/at least one parameter is needed/)
          .waitFor();
        await field.fill('ref, Via!');
        await section.getByRole('button', { name: 'Save link parameters' }).click();
        await section
          .getByRole('alert')
          .getByText(/must be a query-parameter name/)
          .waitFor();

        for (const [label, viewport] of [
          ['1280', DESKTOP],
          ['390', PHONE_390],
        ] as const) {
          await page.setViewportSize(viewport);
          await page.waitForTimeout(150);
          expect(await sidewaysScrolling(page)).toEqual([]);
          await section.screenshot({ path: `/work/shots-3/link-params-${label}.png` });
          await page.screenshot({ path: `/work/shots-3/developers-${label}.png`, fullPage: true });
        }
      });
      expect(errors).toEqual([]);
      await context.close();
    },
  );
});
