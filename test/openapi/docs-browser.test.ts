import type { OpenAPIObject, OperationObject } from 'openapi3-ts/oas30';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeInBrowser, launchChromium } from '../snippet/support/browser.js';
import { testServer } from '../support/server.js';

const TITLE = 'Affiliate Attribution API';

/** Set to a directory to keep what each screen showed (docs-desktop.png, docs-phone.png, ...). */
const SCREENSHOT_DIR = process.env.DOCS_SCREENSHOT_DIR;

interface Operations {
  tags: string[];
  /** Every operation's summary, in the order the reference lists them: by tag, then by path. */
  summaries: string[];
}

function operationsOf(doc: OpenAPIObject): Operations {
  const ops = Object.values(doc.paths).flatMap((item) => Object.values(item as Record<string, OperationObject>));
  const tags = (doc.tags ?? []).map((t) => t.name);
  const summaries = tags.flatMap((tag) => ops.filter((op) => op.tags?.[0] === tag).map((op) => op.summary!));
  return { tags, summaries };
}

/** One visit to /docs, with everything the page asked for and complained about. */
interface Visit {
  context: BrowserContext;
  page: Page;
  requests: string[];
  /** Hosts' URLs the Content-Security-Policy stopped: attempts that never become a request event. */
  blockedByPolicy: string[];
  consoleErrors: string[];
}

async function visitDocs(
  browser: Browser,
  baseUrl: string,
  viewport: { width: number; height: number },
  mobile: boolean,
): Promise<Visit> {
  const context = await browser.newContext({ viewport, isMobile: mobile, hasTouch: mobile });
  const origin = new URL(baseUrl).origin;
  // Nothing leaves the machine, whatever the page asks for: another origin is answered by an
  // abort here, and recorded below as a request all the same.
  await context.route('**/*', (route) =>
    new URL(route.request().url()).origin === origin ? route.continue() : route.abort(),
  );
  await context.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { policyViolations: string[] }).policyViolations = seen;
    // Only blocked URLs: the bundle's zod also probes `new Function('')` (a 'script-src eval'
    // violation it catches, then validates without compiled code), which asks no host for anything.
    document.addEventListener('securitypolicyviolation', (e) => {
      if (/^(https?|wss?):/.test(e.blockedURI)) seen.push(`${e.effectiveDirective} ${e.blockedURI}`);
    });
  });
  const page = await context.newPage();
  const visit: Visit = { context, page, requests: [], blockedByPolicy: [], consoleErrors: [] };
  page.on('request', (request) => visit.requests.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error') visit.consoleErrors.push(message.text());
  });
  page.on('pageerror', (err) => visit.consoleErrors.push(`uncaught: ${err.message}`));

  const res = await page.goto(`${baseUrl}/docs`, { waitUntil: 'load' });
  expect(res?.status()).toBe(200);
  await page.getByRole('heading', { name: TITLE, level: 1 }).first().waitFor({ timeout: 30_000 });
  await page.waitForLoadState('networkidle');
  // Late requests (fonts once text is laid out, telemetry, registry look-ups) would come now.
  await page.waitForTimeout(1_500);
  visit.blockedByPolicy = await page.evaluate(
    () => (window as unknown as { policyViolations: string[] }).policyViolations,
  );
  return visit;
}

/** Whether one of the locator's elements is shown whole inside the viewport, unscrolled. */
function inFirstScreen(locator: Locator): Promise<boolean> {
  // One round trip per locator: the page is large, and the machine running the suite is small.
  return locator.evaluateAll((elements) =>
    elements.some((el) => {
      const r = el.getBoundingClientRect();
      const inside =
        r.width > 0 &&
        r.height > 0 &&
        r.left >= 0 &&
        r.top >= 0 &&
        r.right <= window.innerWidth &&
        r.bottom <= window.innerHeight;
      return inside && el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
    }),
  );
}

/** Loading skeletons (Scalar's `.loading` bars, anything busy) rendered inside the viewport. */
function placeholdersInFirstScreen(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    for (const el of Array.from(
      document.querySelectorAll<HTMLElement>('.loading, [class*="skeleton"], [aria-busy="true"]'),
    )) {
      const r = el.getBoundingClientRect();
      const shown =
        r.width > 0 &&
        r.height > 0 &&
        r.bottom > 0 &&
        r.top < window.innerHeight &&
        r.right > 0 &&
        r.left < window.innerWidth;
      if (shown && getComputedStyle(el).visibility !== 'hidden')
        found.push(`<${el.tagName.toLowerCase()} class="${el.className}"> at y=${Math.round(r.top)}`);
    }
    return found;
  });
}

async function missingFromFirstScreen(page: Page, names: string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const name of names) if (!(await inFirstScreen(page.getByText(name, { exact: true })))) missing.push(name);
  return missing;
}

function expectOnlyOwnOrigin(visit: Visit, baseUrl: string) {
  const origin = new URL(baseUrl).origin;
  // data: URLs carry their content inline, so they ask no host for anything.
  const foreign = visit.requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin);
  expect.soft(foreign, 'requests to other origins (CDN fonts, proxy.scalar.com, telemetry)').toEqual([]);
  expect.soft(visit.blockedByPolicy, 'attempts the Content-Security-Policy had to block').toEqual([]);
  expect(visit.requests.length, 'the page loaded at all').toBeGreaterThan(0);
}

describeInBrowser('GET /docs in headless Chromium', () => {
  let browser: Browser;
  let baseUrl: string;
  let operations: Operations;
  beforeAll(async () => {
    browser = await launchChromium();
    ({ baseUrl } = await testServer());
    operations = operationsOf((await (await fetch(`${baseUrl}/openapi.json`)).json()) as OpenAPIObject);
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe('on a 1280x900 desktop screen', () => {
    let visit: Visit;
    beforeAll(async () => {
      visit = await visitDocs(browser, baseUrl, { width: 1280, height: 900 }, false);
      if (SCREENSHOT_DIR) await visit.page.screenshot({ path: `${SCREENSHOT_DIR}/docs-desktop.png` });
    }, 60_000);
    afterAll(async () => {
      await visit?.context.close();
    });

    it('shows the API title and the first operations in the first screen, with no loading placeholder', async () => {
      const { page } = visit;
      expect
        .soft(
          await inFirstScreen(page.getByRole('heading', { name: TITLE, level: 1 })),
          `"${TITLE}" heading in the first screen`,
        )
        .toBe(true);
      expect
        .soft(
          await missingFromFirstScreen(page, [operations.tags[0], ...operations.summaries.slice(0, 5)]),
          'not in the first screen',
        )
        .toEqual([]);
      expect.soft(await placeholdersInFirstScreen(page), 'loading placeholders in the first screen').toEqual([]);
    });

    it('asks no host but the service itself for anything', () => {
      expectOnlyOwnOrigin(visit, baseUrl);
    });

    it('logs no console error and throws no uncaught error', () => {
      expect(visit.consoleErrors, 'console errors').toEqual([]);
    });

    it('lists every tag and every operation', async () => {
      const visible = await visit.page.evaluate(() => document.body.innerText);
      expect(
        operations.tags.filter((tag) => !visible.includes(tag)),
        'tags not shown',
      ).toEqual([]);
      // Every tag is open, so each operation is rendered in the page body, not only the navigation.
      const headings = await visit.page.getByRole('heading', { level: 3 }).allTextContents();
      expect(
        operations.summaries.filter((s) => !headings.some((h) => h.trim() === s)),
        'operations without a heading',
      ).toEqual([]);
    });
  });

  describe('on a 375x812 phone', () => {
    let visit: Visit;
    beforeAll(async () => {
      visit = await visitDocs(browser, baseUrl, { width: 375, height: 812 }, true);
      if (SCREENSHOT_DIR) await visit.page.screenshot({ path: `${SCREENSHOT_DIR}/docs-phone.png` });
    }, 60_000);
    afterAll(async () => {
      await visit?.context.close();
    });

    it(
      'shows the API title in the first screen, with no loading placeholder; the menu lists the first operations',
      { timeout: 60_000 },
      async () => {
        const { page } = visit;
        expect
          .soft(
            await inFirstScreen(page.getByRole('heading', { name: TITLE, level: 1 })),
            `"${TITLE}" heading in the first screen`,
          )
          .toBe(true);
        expect.soft(await placeholdersInFirstScreen(page), 'loading placeholders in the first screen').toEqual([]);

        // On a phone the navigation sits behind the menu button, itself in the first screen.
        const menu = page.getByRole('button', { name: 'Open Menu' });
        expect(await inFirstScreen(menu), 'menu button in the first screen').toBe(true);
        await menu.click();
        // The menu opens with an animation that a busy CI machine can stretch to seconds.
        await page.getByText(operations.summaries[0], { exact: true }).first().waitFor({ timeout: 20_000 });
        await expect
          .poll(() => missingFromFirstScreen(page, [operations.tags[0], ...operations.summaries.slice(0, 3)]), {
            timeout: 20_000,
          })
          .toEqual([]);
        if (SCREENSHOT_DIR) await page.screenshot({ path: `${SCREENSHOT_DIR}/docs-phone-menu.png` });
      },
    );

    it('asks no host but the service itself for anything', () => {
      expectOnlyOwnOrigin(visit, baseUrl);
    });

    it('logs no console error and throws no uncaught error', () => {
      expect(visit.consoleErrors, 'console errors').toEqual([]);
    });
  });
});
