import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumForBlock, describeInBrowser } from '../snippet/support/browser.js';
import {
  buildDashboard,
  capture,
  DESKTOP,
  pageErrors,
  PHONE,
  seriousViolations,
  sidewaysScrolling,
  signedInPage,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession, startService, type PeopleServer } from './support/people.js';

/**
 * Every list page of the dashboard at 375 px, with long names and addresses in its rows: each row a
 * card, nothing scrolls sideways (neither the page nor a table's frame); at 1280 px, tables.
 */
/** The page's data may take a few seconds on a loaded machine. */
const POLL = { timeout: 10_000 };

let service: PeopleServer;
let base: string;

beforeAll(async () => {
  buildDashboard();
  service = await startService({ WEBHOOK_ALLOW_PRIVATE_URLS: true });
  base = service.baseUrl;
}, 120_000);
afterAll(() => service?.close());

/** How the rows of each table on the page are laid out (`table-row`, or `block` for cards), and whether every labelled cell has its label. */
const rowLayouts = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll('.table-wrap')).map((wrap) => ({
      table: wrap.getAttribute('aria-label'),
      rows: Array.from(wrap.querySelectorAll('tbody tr')).map((tr) => getComputedStyle(tr).display),
      unlabelled: Array.from(wrap.querySelectorAll('tbody td')).filter(
        (td) => !td.hasAttribute('data-label') && (td.textContent ?? '').trim() !== '' && !td.querySelector('button'),
      ).length,
    })),
  );

describeInBrowser('the dashboard on a phone', () => {
  const browser = chromiumForBlock();

  it(
    'at 375 px every list page shows its rows as cards and nothing scrolls sideways; at 1280 px they are tables',
    { timeout: 150_000 },
    async () => {
      const owner = await ownerSession(base, 'Phone Lists Incorporated International');
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const program = await call(base, 'POST', '/api/programs', {
        headers: key,
        body: { name: 'The spring partner programme for European resellers', commission_value: 30, hold_days: 0 },
      });
      expect(program.status).toBe(201);
      const programId = program.body.data.program.id as string;
      const long = await call(base, 'POST', '/api/affiliates', {
        headers: key,
        body: {
          email: 'bartholomew.featherstonehaugh-worthington@partners.example-agency.co.uk',
          name: 'Bartholomew Featherstonehaugh-Worthington',
          program_id: programId,
          slug: 'bartholomew-featherstonehaugh-worthington-spring',
        },
      });
      expect(long.status).toBe(201);
      await call(base, 'POST', '/api/affiliates', {
        headers: key,
        body: { email: 'pat@example.com', program_id: programId, slug: 'pat' },
      });
      const click = await call(base, 'POST', '/api/clicks', {
        headers: key,
        body: { ref: 'bartholomew-featherstonehaugh-worthington-spring' },
      });
      const customerId = 'customer-0f8e2d7c-4b1a-4e39-9d55-2b7c61e0a4f3@accounts.example.com';
      expect(
        (
          await call(base, 'POST', '/api/customers', {
            headers: key,
            body: { customer_id: customerId, click_id: click.body.data.click.id },
          })
        ).status,
      ).toBe(201);
      const conversion = await call(base, 'POST', '/api/conversions', {
        headers: key,
        body: {
          external_id: 'invoice-2026-11-000123456789-renewal-annual-plan',
          amount: 1234.56,
          customer_id: customerId,
        },
      });
      expect(conversion.status).toBe(201);
      expect(
        (
          await call(base, 'POST', '/api/conversions', {
            headers: key,
            body: { external_id: 'o-2', amount: 20, ref: 'pat' },
          })
        ).status,
      ).toBe(201);
      // Pat also sells in euros: the overview's top affiliates ranks each (affiliate, currency), and says which.
      expect(
        (
          await call(base, 'POST', '/api/conversions', {
            headers: key,
            body: { external_id: 'o-3', amount: 15, currency: 'EUR', ref: 'pat' },
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await call(base, 'POST', '/api/commissions', {
            headers: key,
            body: {
              affiliate_id: long.body.data.affiliate.id,
              amount: -5,
              description: 'Correction for a returned order, agreed by e-mail on the 3rd',
            },
          })
        ).status,
      ).toBe(201);
      expect((await call(base, 'POST', '/api/payouts', { headers: key, body: {} })).status).toBe(201);
      for (const [path, body] of [
        ['/api/invitations', { email: 'maximilian.long-address-for-testing@finance.example-company.com' }],
        [
          '/api/webhook-endpoints',
          {
            url: 'http://127.0.0.1:9/affiliate-attribution/webhooks/incoming/0f8e2d7c4b1a4e399d552b7c61e0a4f3',
            description: 'CRM sync',
            events: ['affiliate.created', 'conversion.created'],
          },
        ],
      ] as const) {
        const created = await call(base, 'POST', path, { headers: key, body });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
      }

      const { context, page } = await signedInPage(browser(), base, owner.cookie, { viewport: PHONE });
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'lists-on-a-phone', async () => {
        const problems: string[] = [];
        const pages: [path: string, tables: string[], prepare?: () => Promise<void>][] = [
          ['overview', ['Top affiliates']],
          ['programs', ['Programs']],
          ['affiliates', ['Affiliates']],
          [
            `affiliates/${long.body.data.affiliate.id}`,
            ['Conversions of this affiliate', 'Commissions of this affiliate'],
          ],
          [
            'customers',
            ['Recent conversions', 'Conversions found'],
            async () => {
              await page.getByLabel("Your customer_id or a charge's external_id").fill(customerId);
              await page.getByRole('button', { name: 'Find' }).click();
              await page.getByRole('region', { name: 'Conversions found' }).waitFor();
            },
          ],
          ['commissions', ['Commissions', 'Payouts']],
          ['integrations', []],
          ['developers', ['API keys', 'Webhook endpoints']],
          ['team', ['Users', 'Invitations']],
        ];
        for (const [path, tables, prepare] of pages) {
          await page.setViewportSize(PHONE);
          await page.goto(`${base}/dashboard/${path}`);
          await page.locator('main h1').waitFor();
          await prepare?.();
          for (const table of tables)
            await page.getByRole('region', { name: table, exact: true }).getByRole('row').nth(1).waitFor();
          if (path === 'overview') {
            const top = page.getByRole('region', { name: 'Top affiliates', exact: true });
            for (const name of ['pat@example.com (USD)', 'pat@example.com (EUR)'])
              await top.getByRole('link', { name, exact: true }).waitFor(POLL);
            await top
              .getByRole('link', { name: 'Bartholomew Featherstonehaugh-Worthington', exact: true })
              .waitFor(POLL);
          }
          await page.waitForLoadState('networkidle');
          problems.push(...(await sidewaysScrolling(page)).map((p) => `${path} @375: ${p}`));
          problems.push(...(await seriousViolations(page)).map((v) => `${path} @375: ${v}`));
          for (const layout of await rowLayouts(page)) {
            if (layout.rows.some((d) => d !== 'block'))
              problems.push(`${path} @375: the rows of "${layout.table}" are not cards (${layout.rows.join(', ')})`);
            if (layout.unlabelled > 0)
              problems.push(`${path} @375: ${layout.unlabelled} cells of "${layout.table}" have no label`);
          }
          await capture(page, `list-${path.replace(/\/.*/, '-detail')}`);
          await page.setViewportSize(DESKTOP);
          for (const layout of await rowLayouts(page)) {
            if (layout.rows.some((d) => d !== 'table-row'))
              problems.push(`${path} @1280: "${layout.table}" is not a table (${layout.rows.join(', ')})`);
          }
        }
        expect(problems, problems.join('\n')).toEqual([]);
        expect(errors).toEqual([]);
      });
      await context.close();
    },
  );

  it(
    "the affiliates list shows each affiliate's last 30 days after the list, a line per currency, zeros without activity; a failed report leaves the list",
    { timeout: 90_000 },
    async () => {
      const owner = await ownerSession(base);
      const key = { authorization: `Bearer ${owner.apiKey}` };
      const program = await call(base, 'POST', '/api/programs', {
        headers: key,
        body: { name: 'Main', commission_value: 30 },
      });
      const programId = program.body.data.program.id as string;
      const busy = await call(base, 'POST', '/api/affiliates', {
        headers: key,
        body: { email: 'busy@example.com', name: 'Busy Partner', program_id: programId, slug: 'busy' },
      });
      await call(base, 'POST', '/api/affiliates', {
        headers: key,
        body: { email: 'quiet@example.com', name: 'Quiet Partner', program_id: programId, slug: 'quiet' },
      });
      const click = await call(base, 'POST', '/api/clicks', { headers: key, body: { ref: 'busy' } });
      expect(
        (
          await call(base, 'POST', '/api/customers', {
            headers: key,
            body: { customer_id: 'cus_busy_1', click_id: click.body.data.click.id },
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await call(base, 'POST', '/api/conversions', {
            headers: key,
            body: { external_id: 'usd-1', amount: 100, customer_id: 'cus_busy_1' },
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await call(base, 'POST', '/api/conversions', {
            headers: key,
            body: { external_id: 'eur-1', amount: 50, currency: 'EUR', ref: 'busy' },
          })
        ).status,
      ).toBe(201);

      const { context, page } = await signedInPage(browser(), base, owner.cookie);
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'affiliate-figures', async () => {
        // The report is held until the list is on screen: the list does not wait for it.
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const asked: URL[] = [];
        await page.route('**/api/reports/affiliates?**', async (route) => {
          asked.push(new URL(route.request().url()));
          await held;
          await route.continue();
        });
        await page.goto(`${base}/dashboard/affiliates`);
        const figuresOf = (who: string) => page.getByRole('row', { name: new RegExp(who) }).locator('td.figures-cell');
        await page.getByRole('row', { name: /Busy Partner/ }).waitFor();
        expect(await figuresOf('Busy Partner').textContent()).toBe('Loading…');
        expect(await page.getByRole('row', { name: /Quiet Partner/ }).textContent()).toContain('?ref=quiet');
        release();
        await expect
          .poll(() => figuresOf('Busy Partner').locator('.figures').allTextContents(), POLL)
          .toEqual([
            'Clicks1Signups1Conversions1Net revenue$100.00Earned$30.00Commissions$30.00 pending',
            'Clicks0Signups0Conversions1Net revenue€50.00Earned€15.00Commissions€15.00 pending',
          ]);
        expect(await figuresOf('Quiet Partner').textContent()).toBe(
          'Clicks0Signups0Conversions0Net revenue—Earned—Commissions—',
        );
        // One report for the page: its affiliates, the last 30 days to the end of today (UTC).
        expect(asked).toHaveLength(1);
        const ids = (await call(base, 'GET', '/api/affiliates', { headers: key })).body.data.affiliates.map(
          (a: { id: string }) => a.id,
        );
        expect(asked[0].searchParams.get('affiliate_id')!.split(',').sort()).toEqual([...ids].sort());
        expect(ids).toContain(busy.body.data.affiliate.id);
        const from = new Date(asked[0].searchParams.get('from')!);
        const to = new Date(asked[0].searchParams.get('to')!);
        expect(to.getTime() - from.getTime()).toBe(30 * 86_400_000);
        expect(to.getTime() - Date.now()).toBeGreaterThan(0);
        expect(to.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
        await capture(page, 'affiliates-figures');
        await page.setViewportSize(PHONE);
        expect(await sidewaysScrolling(page)).toEqual([]);
        expect(await seriousViolations(page)).toEqual([]);

        // The report fails: a short message in place of the figures, the list as it was.
        await page.unroute('**/api/reports/affiliates?**');
        await page.route('**/api/reports/affiliates?**', (route) =>
          route.fulfill({
            status: 500,
            contentType: 'application/json',
            body: JSON.stringify({ success: false, message: 'Internal server error' }),
          }),
        );
        await page.reload();
        await expect.poll(() => figuresOf('Busy Partner').textContent(), POLL).toBe('Figures unavailable');
        expect(await figuresOf('Quiet Partner').textContent()).toBe('Figures unavailable');
        expect(await page.getByRole('row', { name: /Busy Partner/ }).textContent()).toContain('?ref=busy');
        expect(await page.getByRole('alert').count()).toBe(0);
      });
      expect(errors).toEqual([]);
      await context.close();
    },
  );
});
