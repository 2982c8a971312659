import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';
import {
  describeInBrowser,
  html,
  launchChromium,
  openPage,
  readmeEmbedCode,
  startMerchantSite,
  svcCookie,
  type MerchantSite,
} from '../snippet/support/browser.js';

declare global {
  interface Window {
    svc: (
      command: string,
      ...args: unknown[]
    ) => Promise<{ ok: boolean; cookieId?: string; fallback?: boolean; deduped?: boolean; error?: string }>;
  }
}

let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

describeInBrowser("first_click in Chromium: the snippet keeps the first partner's cookie", () => {
  let browser: Browser;
  let site: MerchantSite;

  beforeAll(async () => {
    browser = await launchChromium();
    site = await startMerchantSite();
  });

  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it("a second partner's link in the same browser records its click but leaves the cookie, and the signup goes to the first partner", async () => {
    const service = (await testServer()).baseUrl;
    const merchant = await createMerchant({ attribution_model: 'first_click' });
    const otherSlug = unique('second');
    const other = await merchant.api.post('/api/affiliates', {
      email: `${otherSlug}@example.com`,
      program_id: merchant.program.id,
      slug: otherSlug,
    });
    expect(other.status).toBe(201);
    const dir = `/${unique('shop')}`;
    const embed = readmeEmbedCode(service, merchant.id);
    const landing = site.page(`${dir}/landing`, html('<h1>Landing</h1>', embed));
    const signup = site.page(`${dir}/signup`, html('<h1>Sign up</h1>', embed));
    const { context, page } = await openPage(browser);

    await page.goto(`${landing}?ref=${merchant.slug}`);
    const first = await page.evaluate(() => window.svc('detect'));
    expect(first.ok).toBe(true);
    const cookieBefore = await svcCookie(context, landing);
    expect(cookieBefore!.value).toBe(first.cookieId);

    await page.goto(`${landing}?ref=${otherSlug}`);
    const second = await page.evaluate(() => window.svc('detect'));
    expect(second).toMatchObject({ ok: true, cookieId: first.cookieId });
    const cookieAfter = await svcCookie(context, landing);
    expect(cookieAfter!.value).toBe(first.cookieId);
    expect(cookieAfter!.expires).toBe(cookieBefore!.expires);

    // The second partner's click is recorded all the same.
    const { db } = await testServer();
    const clicks = await db.orm.em
      .getConnection()
      .execute<{ n: string }[]>('select count(*) as n from clicks where organization_id = ? and affiliate_id = ?', [
        merchant.id,
        other.body.data.affiliate.id,
      ]);
    expect(Number(clicks[0].n)).toBe(1);

    const customerId = unique('cus');
    await page.goto(signup);
    expect(await page.evaluate((id) => window.svc('trial', id), customerId)).toMatchObject({ ok: true });
    const customer = await merchant.api.get(`/api/customers/${customerId}`);
    expect(customer.body.data.customer.affiliate_id).toBe(merchant.affiliate.id);
    await context.close();
  });
});
