import { existsSync } from 'node:fs';
import type { OpenAPIObject, OperationObject } from 'openapi3-ts/oas30';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testServer } from '../support/server.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) {
  throw new Error(`CI must run the browser test: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
}

describe.skipIf(!available)('GET /docs in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('renders the API reference with every operation, loading nothing from another origin', async () => {
    const { baseUrl } = await testServer();
    const doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as OpenAPIObject;
    const summaries = Object.values(doc.paths).flatMap((item) => Object.values(item as Record<string, OperationObject>).map((op) => op.summary!));
    const tags = (doc.tags ?? []).map((t) => t.name);

    const page = await browser.newPage();
    const foreign: string[] = [];
    const consoleErrors: string[] = [];
    // Scalar's theme still declares its CDN fonts; the page's Content-Security-Policy (font-src
    // 'self') stops those requests before they leave the browser. What must never happen is a
    // request to another origin that gets an answer.
    page.on('response', (response) => {
      const url = response.url();
      if (!url.startsWith(baseUrl) && !url.startsWith('data:') && !url.startsWith('blob:')) foreign.push(url);
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));

    const res = await page.goto(`${baseUrl}/docs`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    // The title is rendered in the page, and every operation is in the navigation (collapsed tag
    // groups keep entries in the DOM, hidden until opened).
    await page.getByRole('heading', { name: 'Affiliate Attribution API' }).first().waitFor({ timeout: 30_000 });
    await page.getByText(summaries[0]!, { exact: true }).first().waitFor({ state: 'attached', timeout: 30_000 });
    // Late requests (fonts, telemetry) would come now.
    await page.waitForTimeout(1_500);
    if (process.env.DOCS_SCREENSHOT) await page.screenshot({ path: process.env.DOCS_SCREENSHOT, fullPage: false });

    const text = await page.evaluate(() => document.body.textContent ?? '');
    const visible = await page.evaluate(() => document.body.innerText);
    for (const tag of tags) expect(visible, `tag ${tag} visible`).toContain(tag);
    const missing = summaries.filter((s) => !text.includes(s));
    expect(missing, 'operations not listed on /docs').toEqual([]);
    // The first tag's operations are rendered in the main content, not only in the navigation.
    expect(visible).toContain(summaries.find((s) => visible.includes(s)) ?? '(no operation visible)');
    expect(foreign, 'answered requests to other origins (CDN, telemetry, fonts)').toEqual([]);
    expect(consoleErrors, 'uncaught errors in the page').toEqual([]);
    await page.close();
  }, 60_000);
});
