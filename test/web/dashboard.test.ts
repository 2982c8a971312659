import { readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumForBlock, describeInBrowser } from '../snippet/support/browser.js';
import { TEST_ADMIN_TOKEN } from '../support/server.js';
import {
  buildDashboard,
  capture,
  DESKTOP,
  initialJavaScript,
  pageErrors,
  PHONE,
  seriousViolations,
  sidewaysScrolling,
  withFailureScreenshots,
} from './support/dashboard.js';
import { call, ownerSession, PASSWORD, startService, type PeopleServer } from './support/people.js';

/**
 * The merchant dashboard in a real Chromium, against a real service on PostgreSQL: the service
 * serves web/dist as `npm start` builds it.
 */
let service: PeopleServer;
let base: string;

beforeAll(async () => {
  buildDashboard();
  service = await startService();
  base = service.baseUrl;
}, 120_000);
afterAll(() => service?.close());

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/** A new organization whose first owner's invitation link the operator got. */
async function invitedOrganization(name: string) {
  const org = await call(base, 'POST', '/admin/organizations', { headers: admin, body: { name } });
  const email = `owner-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const invited = await call(base, 'POST', `/admin/organizations/${org.body.data.organization.id}/invitations`, {
    headers: admin,
    body: { email },
  });
  return {
    id: org.body.data.organization.id as string,
    apiKey: org.body.data.api_key as string,
    keyId: org.body.data.api_key_info.id as string,
    email,
    acceptUrl: invited.body.data.accept_url as string,
  };
}

describe('the built app', () => {
  it('loads under 250 KB of gzipped JavaScript; the chart library comes only with the overview', () => {
    const { files, gzipBytes, lazy } = initialJavaScript();
    console.info(
      `[dashboard] initial JavaScript ${files.join(', ')}: ${(gzipBytes / 1024).toFixed(1)} KB gzipped; lazy chunks ${lazy.join(', ')}`,
    );
    expect(files.length).toBeGreaterThan(0);
    expect(gzipBytes).toBeLessThan(250 * 1024);
  });

  it('is served with year-long cached hashed assets, a revalidated page and its own CSP', async () => {
    const { files } = initialJavaScript();
    const asset = await fetch(`${base}/dashboard/${files[0]}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    for (const path of ['/dashboard', '/dashboard/', '/dashboard/programs', '/dashboard/affiliates/x']) {
      const page = await fetch(base + path);
      expect(page.status, path).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-cache');
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await page.text()).toContain('<div id="root">');
    }
    expect((await fetch(`${base}/dashboard/assets/nope-123.js`)).status).toBe(404);
  });
});

describeInBrowser('the dashboard in Chromium', () => {
  const browser = chromiumForBlock();

  async function newPage(viewport = DESKTOP): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser().newContext({ viewport, acceptDownloads: true });
    const page = await context.newPage();
    return { context, page };
  }

  it(
    'a merchant signs in, creates a program and an affiliate, sees API traffic, approves, pays out, rotates a key, stores a Stripe secret',
    { timeout: 120_000 },
    async () => {
      const org = await invitedOrganization('Acme Inc');
      const { context, page } = await newPage();
      const errors = pageErrors(page);
      await withFailureScreenshots(page, 'end-to-end', async () => {
        // The first owner accepts the operator's invitation and is signed in.
        await page.goto(org.acceptUrl);
        await capture(page, 'accept-invitation');
        await page.getByLabel('Your name').fill('Olivia Owner');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Accept and sign in' }).click();
        await page.waitForURL('**/dashboard/overview');

        // The session cookie: HttpOnly, SameSite=Lax, never readable by the page.
        const cookie = (await context.cookies()).find((c) => c.name === 'svc.session_token')!;
        expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
        expect(await page.evaluate(() => document.cookie)).not.toContain('session_token');

        // A program; the API's error is shown next to the field it names.
        await page.getByRole('link', { name: 'Programs' }).click();
        await capture(page, 'programs-empty');
        await page.getByRole('button', { name: 'New program' }).click();
        await page.getByLabel('Name').fill('Main');
        await page.getByLabel('Commission (%)').fill('150');
        await page.getByRole('button', { name: 'Create program' }).click();
        const commissionField = page.locator('.field', { has: page.getByLabel('Commission (%)') });
        await expect.poll(() => commissionField.getByRole('alert').textContent()).toMatch(/100/);
        await page.getByLabel('Commission (%)').fill('30');
        await page.getByRole('button', { name: 'Create program' }).click();
        await page.getByRole('row', { name: /Main 30 %/ }).waitFor();
        await capture(page, 'programs');

        // An affiliate, and its referral link.
        await page.getByRole('link', { name: 'Affiliates' }).click();
        await page.getByRole('button', { name: 'Add affiliate' }).click();
        await page.getByLabel('E-mail', { exact: true }).first().fill('jane@example.com');
        await page.locator('form[aria-label="Add an affiliate"]').getByLabel('Name').fill('Jane Partner');
        await page.getByLabel('Referral slug').fill('jane');
        await page.getByRole('button', { name: 'Add affiliate' }).last().click();
        await page.getByRole('row', { name: /Jane Partner/ }).waitFor();
        await expect.poll(() => page.getByRole('row', { name: /Jane Partner/ }).textContent()).toContain('?ref=jane');

        // A click and a conversion through the API, with the organization's key, show up.
        const key = { authorization: `Bearer ${org.apiKey}` };
        const click = await call(base, 'POST', '/api/clicks', { headers: key, body: { ref: 'jane' } });
        expect(click.status).toBe(201);
        const conversion = await call(base, 'POST', '/api/conversions', {
          headers: key,
          body: { external_id: 'order-1001', amount: 100, click_id: click.body.data.click.id },
        });
        expect(conversion.status).toBe(201);
        await page.getByRole('link', { name: 'Customers' }).click();
        await page.getByRole('row', { name: /order-1001/ }).waitFor();
        expect(await page.getByRole('row', { name: /order-1001/ }).textContent()).toMatch(
          /\$100\.00.*\$30\.00.*by click/,
        );
        // Jane's last 30 days in the affiliates list (the report, after the list: test/web/dashboard-lists.test.ts).
        await page.getByRole('link', { name: 'Affiliates' }).click();
        const janeFigures = page.getByRole('row', { name: /Jane Partner/ }).locator('td.figures-cell');
        await expect
          .poll(() => janeFigures.textContent(), { timeout: 10_000 })
          .toBe('Clicks1Signups0Conversions1Net revenue$100.00Earned$30.00Commissions$30.00 pending');
        await capture(page, 'affiliates');
        // The overview counts the click (where the reports endpoints are mounted; else it says they are not).
        await page.getByRole('link', { name: 'Overview' }).click();
        const reports = await call(
          base,
          'GET',
          `/api/reports/timeseries?from=2026-01-01T00:00:00Z&to=${new Date(Date.now() + 86_400_000).toISOString()}`,
          { headers: key },
        );
        if (reports.status === 200) {
          await expect.poll(() => page.locator('.kpi', { hasText: 'Clicks' }).textContent()).toBe('Clicks1');
          await expect
            .poll(() => page.locator('.kpi', { hasText: 'Net revenue' }).textContent())
            .toBe('Net revenue$100.00');
        } else {
          await page.getByText('Reports are not available on this server yet').waitFor();
        }
        await page.getByRole('link', { name: 'Customers' }).click();
        await page.getByLabel("Your customer_id or a charge's external_id").fill('order-1001');
        await page.getByRole('button', { name: 'Find' }).click();
        await page.getByRole('region', { name: 'Conversions found' }).waitFor();
        await capture(page, 'customers');

        // The sale's commission (held 30 days): approve it, pay it out, download the CSV, mark it paid.
        await page.getByRole('link', { name: 'Commissions & payouts' }).click();
        const sale = page.getByRole('row', { name: /\$30\.00 pending sale/ });
        await sale.waitFor();
        await capture(page, 'commissions');
        await sale.getByRole('checkbox').check();
        await page.getByRole('button', { name: 'Approve selected' }).click();
        await page.getByRole('row', { name: /\$30\.00 approved sale/ }).waitFor();
        await page.getByRole('button', { name: 'Create payouts' }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Create payouts' }).click();
        const payout = page
          .getByRole('region', { name: 'Payouts' })
          .getByRole('row', { name: /\$30\.00 payout [0-9a-f]{8} pending 1/ });
        await payout.waitFor();
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('link', { name: 'CSV', exact: true }).click(),
        ]);
        const csv = readFileSync(await download.path(), 'utf8');
        expect(csv).toContain('jane@example.com');
        expect(csv).toMatch(/30(\.00)?/);
        await payout.getByRole('button', { name: 'Mark paid…' }).click();
        await page.getByLabel('Transfer reference (optional)').fill('BATCH-7');
        await page.getByRole('button', { name: 'Mark paid', exact: true }).click();
        await page.getByRole('combobox', { name: 'Status' }).last().selectOption('paid');
        await page
          .getByRole('region', { name: 'Payouts' })
          .getByRole('row', { name: /\$30\.00 payout [0-9a-f]{8} paid .*Your reference BATCH-7/ })
          .waitFor();
        await capture(page, 'payouts');

        // Rotation: a new key, shown once; the old key revoked, then refused.
        await page.getByRole('link', { name: 'Developers' }).click();
        await expect.poll(() => page.locator('pre.code').textContent()).toContain(`data-organization="${org.id}"`);
        await page.getByRole('button', { name: 'Create API key' }).click();
        const newKey = (await page.getByTestId('new-api-key').textContent())!;
        expect(newKey).toMatch(/^svc-/);
        await capture(page, 'developers');
        const oldRedacted = `${org.apiKey.slice(0, 8)}…${org.apiKey.slice(-4)}`;
        await page.getByRole('button', { name: `Revoke ${oldRedacted}` }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
        await page.getByRole('row', { name: new RegExp(`${oldRedacted}.*revoked`) }).waitFor();
        expect((await call(base, 'GET', '/api/me', { headers: key })).status).toBe(401);
        expect((await call(base, 'GET', '/api/me', { headers: { authorization: `Bearer ${newKey}` } })).status).toBe(
          200,
        );
        await page.reload();
        await page.getByRole('heading', { name: 'API keys' }).waitFor();
        expect(await page.content()).not.toContain(newKey); // shown once, never again

        // A Stripe signing secret.
        await page.getByRole('link', { name: 'Integrations' }).click();
        await page.getByLabel('Stripe signing secret').fill('whsec_test_0123456789abcdef');
        await page.getByRole('button', { name: 'Store secret' }).first().click();
        await page.getByRole('heading', { name: /Stripe configured/ }).waitFor();
        await capture(page, 'integrations');
        const integrations = await call(base, 'GET', '/api/integrations', {
          headers: { authorization: `Bearer ${newKey}` },
        });
        expect(
          integrations.body.data.integrations.find((i: { provider: string }) => i.provider === 'stripe'),
        ).toMatchObject({ configured: true });

        // A teammate's invitation.
        await page.getByRole('link', { name: 'Team' }).click();
        await page.getByLabel('E-mail').fill('max@example.com');
        await page.getByRole('button', { name: 'Send invitation' }).click();
        await page.getByRole('status').filter({ hasText: 'Invitation sent' }).waitFor();
        await page.getByRole('row', { name: /max@example.com member pending/ }).waitFor();
        await capture(page, 'team');
        expect(errors).toEqual([]);
      });
      await context.close();
    },
  );

  it(
    'a member cannot see or create API keys, by the menu, the URL or the API (Developers shows them webhook endpoints only)',
    { timeout: 60_000 },
    async () => {
      const owner = await ownerSession(base);
      const invited = await call(base, 'POST', '/api/invitations', {
        headers: { cookie: owner.cookie, origin: base },
        body: { email: `member-${Date.now()}@example.com` },
      });
      const { context, page } = await newPage();
      await withFailureScreenshots(page, 'member', async () => {
        await page.goto(invited.body.data.accept_url);
        await page.getByLabel('Your name').fill('Max Member');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Accept and sign in' }).click();
        await page.waitForURL('**/dashboard/overview');
        const nav = page.getByRole('navigation', { name: 'Dashboard' });
        await nav.getByRole('link', { name: 'Programs' }).waitFor();
        for (const name of ['Integrations', 'Team'])
          expect(await nav.getByRole('link', { name }).count(), name).toBe(0);
        await page.goto(`${base}/dashboard/team`);
        await page.getByRole('heading', { name: 'Not found' }).waitFor();
        // Developers: webhook endpoints and the snippet (the spec leaves them to members), no key.
        await nav.getByRole('link', { name: 'Developers' }).click();
        await page.getByRole('heading', { name: 'Webhook endpoints' }).waitFor();
        await page.getByText('Only an owner of the organization can create and revoke API keys.').waitFor();
        expect(await page.getByRole('button', { name: 'Create API key' }).count()).toBe(0);
        expect(await page.locator('.table-wrap[aria-label="API keys"]').count()).toBe(0);
        expect(await page.content()).not.toMatch(/svc-\w{4}…/);
        const answers = await page.evaluate(async () => {
          const list = await fetch('/api/api-keys');
          const create = await fetch('/api/api-keys', { method: 'POST' });
          return [list.status, create.status, await create.text()];
        });
        expect(answers).toEqual([
          403,
          403,
          JSON.stringify({ success: false, message: 'Only an owner can manage API keys, integrations and the team' }),
        ]);
        const keys = await call(base, 'GET', '/api/api-keys', { headers: { authorization: `Bearer ${owner.apiKey}` } });
        // The organization's first keys (live and test), and none the member made.
        expect(keys.body.data.api_keys.map((k: { mode: string }) => k.mode)).toEqual(['live', 'test']);
      });
      await context.close();
    },
  );

  it('a user of organization A sees nothing of B, URL tampering included', { timeout: 60_000 }, async () => {
    const a = await invitedOrganization('Org A');
    const b = await ownerSession(base, 'Org B');
    const bProgram = await call(base, 'POST', '/api/programs', {
      headers: { authorization: b.apiKey },
      body: { name: 'B secret program', commission_value: 10 },
    });
    const bAffiliate = await call(base, 'POST', '/api/affiliates', {
      headers: { authorization: b.apiKey },
      body: { email: 'b-partner@example.com', program_id: bProgram.body.data.program.id },
    });
    const { context, page } = await newPage();
    await withFailureScreenshots(page, 'tampering', async () => {
      await page.goto(a.acceptUrl);
      await page.getByLabel('Your name').fill('Alice');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Accept and sign in' }).click();
      await page.waitForURL('**/dashboard/overview');
      await page.goto(`${base}/dashboard/affiliates/${bAffiliate.body.data.affiliate.id}`);
      await page.getByRole('alert').filter({ hasText: 'This resource belongs to another organization' }).waitFor();
      await page.goto(`${base}/dashboard/programs`);
      await page.getByText('No program yet').waitFor();
      const html = await page.content();
      for (const secret of ['B secret program', 'b-partner@example.com', bAffiliate.body.data.affiliate.id])
        expect(html).not.toContain(secret);
      // the API from A's page, with B's ids
      const status = await page.evaluate(
        async (id) => (await fetch(`/api/programs/${id}`)).status,
        bProgram.body.data.program.id,
      );
      expect(status).toBe(403);
    });
    await context.close();
  });

  it(
    'a cross-site form post is refused (CSRF): the session cookie does not travel, nothing is created',
    { timeout: 60_000 },
    async () => {
      const org = await invitedOrganization('CSRF target');
      const { context, page } = await newPage();
      await withFailureScreenshots(page, 'csrf', async () => {
        await page.goto(org.acceptUrl);
        await page.getByLabel('Your name').fill('Victim');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Accept and sign in' }).click();
        await page.waitForURL('**/dashboard/overview');
        // Another site (localhost is not 127.0.0.1's site) posts a form, and a script tries fetch with credentials.
        const { createServer } = await import('node:http');
        const evil = createServer((_req, res) => {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end(`<form id="f" method="post" action="${base}/api/programs" enctype="text/plain"><input name='{"name":"pwned","commission_value":1,"x":"' value='"}'></form>
          <script>fetch("${base}/api/programs", { method: "POST", credentials: "include", headers: { "content-type": "text/plain" }, body: '{"name":"pwned2","commission_value":1}' }).catch(() => {}).finally(() => document.getElementById("f").submit());</script>`);
        });
        await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
        const evilPort = (evil.address() as { port: number }).port;
        try {
          const [answer] = await Promise.all([
            page.waitForResponse((r) => r.url() === `${base}/api/programs` && r.request().method() === 'POST'),
            page.goto(`http://localhost:${evilPort}/`),
          ]);
          expect([401, 403]).toContain(answer.status());
          await page.waitForTimeout(500);
        } finally {
          evil.close();
        }
        const programs = await call(base, 'GET', '/api/programs', { headers: { authorization: org.apiKey } });
        expect(programs.body.data.programs).toEqual([]);
      });
      await context.close();
    },
  );

  it('a wrong password 10 times is slowed down', { timeout: 60_000 }, async () => {
    const limited = await startService({ SIGN_IN_RATE_LIMIT_MAX: 5 }, service.db);
    const owner = await ownerSession(base);
    const { context, page } = await newPage();
    await withFailureScreenshots(page, 'rate-limit', async () => {
      await page.goto(`${limited.baseUrl}/dashboard/sign-in`);
      const messages: string[] = [];
      for (let i = 0; i < 10; i++) {
        await page.getByLabel('E-mail').fill(owner.email);
        await page.getByLabel('Password').fill(`wrong password ${i}`);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('alert').waitFor();
        messages.push((await page.getByRole('alert').textContent())!);
      }
      expect(messages.slice(0, 5).every((m) => /invalid/i.test(m))).toBe(true);
      expect(messages.slice(5).every((m) => /Too many attempts; try again in \d+ seconds/.test(m))).toBe(true);
    });
    await context.close();
    await limited.close();
  });

  it('every page: no serious axe-core violation, usable at 375 px, keyboard usable', { timeout: 120_000 }, async () => {
    const org = await invitedOrganization('Accessible Inc');
    const context = await browser().newContext({ viewport: DESKTOP, bypassCSP: true });
    const page = await context.newPage();
    await withFailureScreenshots(page, 'accessibility', async () => {
      const problems: string[] = [];
      await page.goto(`${base}/dashboard/sign-in`);
      problems.push(...(await seriousViolations(page)).map((v) => `sign-in: ${v}`));
      await page.goto(org.acceptUrl);
      problems.push(...(await seriousViolations(page)).map((v) => `accept: ${v}`));
      // Keyboard only: name, password, submit.
      await page.keyboard.press('Tab');
      await page.keyboard.type('Kim Keyboard');
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.waitForURL('**/dashboard/overview');
      // Seed a little of everything so that tables render.
      const key = { authorization: org.apiKey };
      const program = await call(base, 'POST', '/api/programs', {
        headers: key,
        body: { name: 'Main', commission_value: 20 },
      });
      await call(base, 'POST', '/api/affiliates', {
        headers: key,
        body: { email: 'p@example.com', program_id: program.body.data.program.id, slug: 'pat' },
      });
      await call(base, 'POST', '/api/conversions', {
        headers: key,
        body: { external_id: 'o-1', amount: 50, ref: 'pat' },
      });
      const timings: string[] = [];
      for (const path of [
        'get-started',
        'overview',
        'programs',
        'affiliates',
        'customers',
        'commissions',
        'integrations',
        'developers',
        'team',
      ]) {
        for (const viewport of [DESKTOP, PHONE]) {
          await page.setViewportSize(viewport);
          await page.goto(`${base}/dashboard/${path}`);
          await page.locator('main h1').waitFor();
          await page.waitForLoadState('networkidle');
          if (viewport === DESKTOP) {
            // The browser's own clock: the page interactive, and its API calls answered (slowest).
            const t = await page.evaluate(() => {
              const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
              const api = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter((r) =>
                /\/(api|auth)\//.test(r.name),
              );
              return {
                interactive: nav.domInteractive,
                settled: Math.max(nav.loadEventEnd, ...api.map((r) => r.responseEnd)),
                slowestApi: Math.max(0, ...api.map((r) => r.duration)),
                calls: api.length,
              };
            });
            timings.push(
              `${path}: interactive ${t.interactive.toFixed(0)} ms, data shown by ${t.settled.toFixed(0)} ms, ${t.calls} API calls, slowest ${t.slowestApi.toFixed(0)} ms`,
            );
          }
          problems.push(...(await seriousViolations(page)).map((v) => `${path} @${viewport.width}: ${v}`));
          // Nothing scrolls sideways: on a phone the tables are cards (test/web/dashboard-lists.test.ts has longer rows).
          if (viewport === PHONE) problems.push(...(await sidewaysScrolling(page)).map((p) => `${path} @375: ${p}`));
          const overflow = await page.evaluate(
            () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
          );
          expect(overflow, `${path} @${viewport.width}px scrolls sideways`).toBeLessThanOrEqual(0);
        }
      }
      console.info(`[dashboard] page timings (small test database, not the seeded one):\n  ${timings.join('\n  ')}`);
      expect(problems).toEqual([]);
      // Keyboard: the skip link first, then the menu; a program created without a mouse.
      await page.setViewportSize(DESKTOP);
      await page.goto(`${base}/dashboard/programs`);
      await page.locator('main h1').waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('New program');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      await page.keyboard.type('Keyboard program');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.type('12');
      await page.keyboard.press('Enter');
      await page.getByRole('row', { name: /Keyboard program 12 %/ }).waitFor();
      // The confirmation dialog: Escape cancels.
      await page.goto(`${base}/dashboard/developers`);
      await page
        .getByRole('button', { name: /^Revoke / })
        .first()
        .focus();
      await page.keyboard.press('Enter');
      await page.getByRole('dialog').waitFor();
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      expect((await call(base, 'GET', '/api/me', { headers: key })).status).toBe(200);
    });
    await context.close();
  });
});
