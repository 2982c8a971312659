import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';
import { describeInBrowser, launchChromium, openPage, svcCookie } from './support/browser.js';
import { buildSdkPackage, startMerchantApp, type BuiltSdk, type MerchantApp } from './support/merchant-app.js';

/**
 * Old links keep working on the server side too (issue 47, item 4): the SDK's referral middleware,
 * its Fetch-style referralCookie and its first-party proxy honour the organization's link
 * parameters (`?via=` once `via` is in the list) with the merchant's code unchanged.
 */
type Merchant = Awaited<ReturnType<typeof createMerchant>>;

async function affiliatesOfClicks(organizationId: string): Promise<string[]> {
  const { db } = await testServer();
  const rows = await db.orm.em
    .getConnection()
    .execute<{ affiliate_id: string }[]>('select affiliate_id from clicks where organization_id = ?', [organizationId]);
  return rows.map((r) => r.affiliate_id);
}

describeInBrowser('link parameters in the SDK server helpers (Chromium, built SDK)', () => {
  let browser: Browser;
  let sdk: BuiltSdk;
  let service: string;
  const apps: MerchantApp[] = [];

  async function app(merchant: Merchant, mode: 'middleware' | 'proxy'): Promise<MerchantApp> {
    const started = await startMerchantApp(sdk, {
      SVC_BASE_URL: service,
      SVC_API_KEY: merchant.key,
      SVC_ORGANIZATION: merchant.id,
      SVC_TIMEOUT_MS: '5000',
      SVC_MODE: mode,
    });
    apps.push(started);
    return started;
  }

  async function merchantWithVia(): Promise<Merchant> {
    const merchant = await createMerchant({ click_window_days: 30 });
    expect((await merchant.api.put('/api/link-params', { link_params: ['ref', 'via'] })).status).toBe(200);
    return merchant;
  }

  beforeAll(async () => {
    [sdk, browser, { baseUrl: service }] = await Promise.all([buildSdkPackage(), launchChromium(), testServer()]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await browser?.close();
    sdk?.remove();
  });

  it('the middleware and referralCookie set svc_aff for ?via= (learned from the service, no option); a name not in the list records nothing', async () => {
    const merchant = await merchantWithVia();
    const shop = await app(merchant, 'middleware');
    const { context, page } = await openPage(browser);

    await page.goto(`${shop.origin}/landing?aff=${merchant.slug}`);
    expect(await svcCookie(context, shop.origin)).toBeUndefined();
    expect(await affiliatesOfClicks(merchant.id)).toEqual([]);

    const response = await page.goto(`${shop.origin}/landing?utm_source=mail&via=${merchant.slug}`);
    expect((await response!.allHeaders())['set-cookie']).toMatch(/^svc_aff=ck_[0-9A-Za-z]{22}; Path=\/; Max-Age=/);
    expect((await svcCookie(context, shop.origin))?.value).toMatch(/^ck_/);
    expect(await affiliatesOfClicks(merchant.id)).toEqual([merchant.affiliate.id]);
    await context.close();

    const edge = await openPage(browser);
    await edge.page.goto(`${shop.origin}/edge/landing?via=${merchant.slug}`);
    expect((await svcCookie(edge.context, shop.origin))?.value).toMatch(/^ck_/);
    expect(await affiliatesOfClicks(merchant.id)).toEqual([merchant.affiliate.id, merchant.affiliate.id]);
    await edge.context.close();
  });

  it("the first-party proxy serves the snippet the organization's list from the merchant's origin, and ?via= attributes", async () => {
    const merchant = await merchantWithVia();
    const shop = await app(merchant, 'proxy');
    const { context, page, pageErrors } = await openPage(browser);
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    const list = page.waitForResponse((r) => r.url().endsWith(`/_aff/public/organizations/${merchant.id}/link-params`));
    await page.goto(`${shop.origin}/landing?via=${merchant.slug}`);
    const detected = await page.evaluate(() => window.svc('detect'));
    expect(detected.ok, JSON.stringify(detected)).toBe(true);
    const answer = await list;
    expect(answer.status()).toBe(200);
    expect(await answer.json()).toEqual({ success: true, data: { link_params: ['ref', 'via'] } });
    expect((await answer.allHeaders())['cache-control']).toBe('public, max-age=300');
    expect(requested.filter((url) => !url.startsWith(shop.origin))).toEqual([]);
    expect((await svcCookie(context, shop.origin))?.value).toBe(detected.cookieId);
    expect(await affiliatesOfClicks(merchant.id)).toEqual([merchant.affiliate.id]);
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
