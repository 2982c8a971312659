import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumForBlock, describeInBrowser } from '../snippet/support/browser.js';
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

/** The Coupons page: a merchant lists, adds and deactivates partners' promotion codes (GET/POST/DELETE /api/coupons). */
const POLL = { timeout: 10_000 };
let service: PeopleServer;
let base: string;

beforeAll(async () => {
  buildDashboard();
  service = await startService();
  base = service.baseUrl;
}, 120_000);
afterAll(() => service?.close());

describeInBrowser('the Coupons page', () => {
  const browser = chromiumForBlock();

  it(
    'adds a code for a partner found by e-mail, refuses a taken code and an unknown partner, and deactivates a code',
    { timeout: 120_000 },
    async () => {
      const owner = await ownerSession(base, 'Coupon Shop');
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const program = async (name: string) =>
        (await call(base, 'POST', '/api/programs', { headers: key, body: { name, commission_value: 20 } })).body.data
          .program.id as string;
      const main = await program('Main programme');
      const resellers = await program('Resellers');
      const affiliate = async (email: string, name: string, programId: string) => {
        const res = await call(base, 'POST', '/api/affiliates', {
          headers: key,
          body: { email, name, program_id: programId },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        return res.body.data.affiliate.id as string;
      };
      await affiliate('ada@example.com', 'Ada Lovelace', main);
      await affiliate('bob@example.com', 'Bob Builder', main);
      const bobResellers = await affiliate('bob@example.com', 'Bob Builder', resellers);

      const { context, page } = await signedInPage(browser(), base, owner.cookie);
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'coupons-page', async () => {
        await page.goto(`${base}/dashboard`);
        await page.getByRole('link', { name: 'Coupons' }).click();
        await page.getByText('No coupon yet').waitFor(POLL);

        const form = page.getByRole('form', { name: 'Add a coupon' });
        await page.getByRole('button', { name: 'Add coupon' }).click();
        await form.getByLabel('Code').fill('ADA-10');
        await form.getByLabel('Affiliate e-mail').fill('ada@example.com');
        await form.getByRole('button', { name: 'Add coupon' }).click();
        const table = page.getByRole('region', { name: 'Coupons' });
        const adaRow = table.getByRole('row', { name: /ADA-10/ });
        await expect.poll(() => adaRow.textContent(), POLL).toContain('Ada Lovelace');
        expect(await adaRow.textContent()).toContain('Main programme');

        // Codes are one per organization whatever their case: the API's 409 is shown.
        await page.getByRole('button', { name: 'Add coupon' }).click();
        await form.getByLabel('Code').fill('ada-10');
        await form.getByLabel('Affiliate e-mail').fill('bob@example.com');
        await form.getByLabel('Program').selectOption({ label: 'Resellers' });
        await form.getByRole('button', { name: 'Add coupon' }).click();
        await expect.poll(() => form.getByRole('alert').textContent(), POLL).toMatch(/already|taken|exists/i);

        // An unknown partner, and a partner in two programs without one chosen: the field says so.
        await form.getByLabel('Code').fill('NOBODY');
        await form.getByLabel('Affiliate e-mail').fill('nobody@example.com');
        await form.getByLabel('Program').selectOption('');
        await form.getByRole('button', { name: 'Add coupon' }).click();
        await expect.poll(() => form.textContent(), POLL).toContain('No affiliate with this e-mail');
        await form.getByLabel('Code').fill('BOB-RESELL');
        await form.getByLabel('Affiliate e-mail').fill('bob@example.com');
        await form.getByRole('button', { name: 'Add coupon' }).click();
        await expect.poll(() => form.textContent(), POLL).toContain('This partner is in several programs: choose one');
        await form.getByLabel('Program').selectOption({ label: 'Resellers' });
        await form.getByRole('button', { name: 'Add coupon' }).click();
        await expect
          .poll(() => table.getByRole('row', { name: /BOB-RESELL/ }).textContent(), POLL)
          .toContain('Resellers');
        const listed = await call(base, 'GET', '/api/coupons', { headers: key });
        expect(listed.body.data.coupons.map((c: any) => [c.code, c.affiliate_id])).toContainEqual([
          'BOB-RESELL',
          bobResellers,
        ]);

        for (const [label, viewport] of [
          ['1280', DESKTOP],
          ['390', { width: 390, height: 844 }],
        ] as const) {
          await page.setViewportSize(viewport);
          await page.waitForTimeout(200);
          await page.screenshot({ path: `/work/shots-5/coupons-${label}.png`, fullPage: true });
          expect(await sidewaysScrolling(page)).toEqual([]);
        }
        await page.setViewportSize(DESKTOP);
        expect(await seriousViolations(page)).toEqual([]);

        await adaRow.getByRole('button', { name: 'Deactivate ADA-10' }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Deactivate' }).click();
        await expect.poll(() => table.getByRole('row', { name: /ADA-10/ }).count(), POLL).toBe(0);
        const after = await call(base, 'GET', '/api/coupons', { headers: key });
        expect(after.body.data.coupons.map((c: any) => c.code)).toEqual(['BOB-RESELL']);
        expect(errors).toEqual([]);
      });
      await context.close();
    },
  );
});
