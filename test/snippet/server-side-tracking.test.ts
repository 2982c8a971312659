/**
 * Server-side referral capture and the snippet's first-party path, in Chromium, against a
 * merchant app built on the BUILT SDK (`@affiliate-attribution/sdk/server` through its package
 * exports): what the visitor's browser keeps, and what the service records. The merchant's
 * server calls the service from 127.0.0.3 while the browser is 127.0.0.1, so a click that
 * carries 127.0.0.1 carries the visitor's address, not the merchant server's.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';
import { describeInBrowser, launchChromium, openPage, svcCookie } from './support/browser.js';
import {
  buildSdkPackage,
  startMerchantApp,
  startSilentService,
  type BuiltSdk,
  type MerchantApp,
  type MerchantAppEnv,
} from './support/merchant-app.js';

declare global {
  interface Window {
    svc: (
      command: string,
      ...args: unknown[]
    ) => Promise<{ ok: boolean; cookieId?: string; fallback?: boolean; deduped?: boolean; error?: string }>;
    cookieWrites: string[];
  }
}

type Merchant = Awaited<ReturnType<typeof createMerchant>>;

const DAY = 86_400;
const MERCHANT_SERVER_ADDRESS = '127.0.0.3';
const GOOGLEBOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

async function clicksOf(organizationId: string) {
  const { db } = await testServer();
  return db.orm.em.getConnection().execute<
    {
      id: string;
      cookie_id: string;
      affiliate_id: string;
      landing_url: string | null;
      referrer: string | null;
      user_agent: string | null;
      ip: string | null;
    }[]
  >('select id, cookie_id, affiliate_id, landing_url, referrer, user_agent, ip from clicks where organization_id = ? order by created_at', [organizationId]);
}

/** Records every write to document.cookie, so that a test can tell a script-written cookie from a Set-Cookie one. */
async function watchCookieWrites(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const descriptor = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie')!;
    window.cookieWrites = [];
    Object.defineProperty(Document.prototype, 'cookie', {
      configurable: true,
      get() {
        return descriptor.get!.call(this);
      },
      set(value: string) {
        window.cookieWrites.push(value);
        descriptor.set!.call(this, value);
      },
    });
  });
}

function expectLifetime(cookie: { expires: number }, seconds: number): void {
  expect(cookie.expires - Date.now() / 1000).toBeGreaterThan(seconds - 120);
  expect(cookie.expires - Date.now() / 1000).toBeLessThanOrEqual(seconds + 5);
}

describeInBrowser('server-side tracking in Chromium: a merchant app on the built SDK', () => {
  let browser: Browser;
  let sdk: BuiltSdk;
  let service: string;
  const apps: MerchantApp[] = [];

  async function app(merchant: Merchant, env: Partial<MerchantAppEnv> = {}): Promise<MerchantApp> {
    const started = await startMerchantApp(sdk, {
      SVC_BASE_URL: service,
      SVC_API_KEY: merchant.key,
      SVC_ORGANIZATION: merchant.id,
      SVC_LOCAL_ADDRESS: MERCHANT_SERVER_ADDRESS,
      // A busy test machine can take longer than the default 500 ms; the timeout has tests of its own below.
      SVC_TIMEOUT_MS: '5000',
      ...env,
    });
    apps.push(started);
    return started;
  }

  beforeAll(async () => {
    [sdk, browser, { baseUrl: service }] = await Promise.all([buildSdkPackage(), launchChromium(), testServer()]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await browser?.close();
    sdk?.remove();
  });

  it("?ref= on the merchant's page: svc_aff comes in the page's own Set-Cookie with the program's lifetime, readable by the snippet; the click carries the browser's user agent and address", async () => {
    const merchant = await createMerchant({ click_window_days: 30 });
    const shop = await app(merchant);
    const { context, page, pageErrors } = await openPage(browser);
    await watchCookieWrites(context);

    const response = await page.goto(`${shop.origin}/landing?ref=${merchant.slug}&utm_source=news`, {
      referer: 'https://partner.example/blog',
    });
    expect(response!.status()).toBe(200);
    const setCookie = (await response!.allHeaders())['set-cookie'];
    expect(setCookie).toMatch(/^svc_aff=ck_[0-9A-Za-z]{22}; Path=\/; Max-Age=2592000; SameSite=Lax$/);

    const cookie = await svcCookie(context, shop.origin);
    expect(cookie).toBeDefined();
    expect(setCookie).toContain(`svc_aff=${cookie!.value};`);
    expect(cookie).toMatchObject({ path: '/', sameSite: 'Lax', secure: false, httpOnly: false, domain: 'localhost' });
    expectLifetime(cookie!, 30 * DAY);
    expect(await page.evaluate(() => document.cookie)).toContain(`svc_aff=${cookie!.value}`); // svc('trial') reads it
    expect(await page.evaluate(() => window.cookieWrites)).toEqual([]); // no script wrote it

    const userAgent = await page.evaluate(() => navigator.userAgent);
    expect(await clicksOf(merchant.id)).toEqual([
      {
        id: expect.any(String),
        cookie_id: cookie!.value,
        affiliate_id: merchant.affiliate.id,
        landing_url: `${shop.origin}/landing?ref=${merchant.slug}&utm_source=news`,
        referrer: 'https://partner.example/blog',
        user_agent: userAgent,
        ip: '127.0.0.1',
      },
    ]);

    // At signup the merchant's backend reads it back (getCookieId), and the snippet's svc('trial') too.
    await page.goto(`${shop.origin}/signup`);
    expect(await (await page.request.get(`${shop.origin}/backend/cookie`)).json()).toEqual({
      cookie_id: cookie!.value,
    });
    const trial = await page.evaluate(() => window.svc('trial', 'cus_server_side_1'));
    expect(trial).toEqual({ ok: true, deduped: false });
    const customer = await merchant.api.get('/api/customers/cus_server_side_1');
    expect(customer.body.data.customer).toMatchObject({
      affiliate_id: merchant.affiliate.id,
      click_id: (await clicksOf(merchant.id))[0].id,
    });
    // Pages without the parameter record nothing more.
    expect(await clicksOf(merchant.id)).toHaveLength(1);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('the middleware and the snippet on one page: one click per visit; the snippet answers the cookie the middleware set and writes nothing', async () => {
    const merchant = await createMerchant({ click_window_days: 30 });
    const shop = await app(merchant);
    const { context, page, pageErrors } = await openPage(browser);
    await watchCookieWrites(context);
    const response = await page.goto(`${shop.origin}/combined/landing?ref=${merchant.slug}`);
    expect((await response!.allHeaders())['set-cookie']).toMatch(
      /^svc_aff=ck_[0-9A-Za-z]{22}; Path=\/; Max-Age=2592000; SameSite=Lax$/,
    );
    const cookie = await svcCookie(context, shop.origin);
    // The snippet's own capture of this visit (svc('detect') answers the one it ran at load).
    expect(await page.evaluate(() => window.svc('detect'))).toEqual({ ok: true, cookieId: cookie!.value });
    expect(await page.evaluate(() => window.cookieWrites)).toEqual([]);
    expect((await clicksOf(merchant.id)).map((click) => click.cookie_id)).toEqual([cookie!.value]);
    // At signup the click is the visit's one.
    await page.goto(`${shop.origin}/signup`);
    expect(await page.evaluate(() => window.svc('trial', 'cus_combined_1'))).toEqual({ ok: true, deduped: false });
    expect((await merchant.api.get('/api/customers/cus_combined_1')).body.data.customer).toMatchObject({
      click_id: (await clicksOf(merchant.id))[0].id,
    });
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('the snippet on a static page, then the middleware and the snippet on the next page that keeps ?ref=: still one click; another ref later is a click of its own', async () => {
    const merchant = await createMerchant();
    const other = await merchant.api.post('/api/affiliates', {
      email: `other-${merchant.slug}@example.com`,
      program_id: merchant.program.id,
      slug: `o-${merchant.slug}`,
    });
    expect(other.status).toBe(201);
    const shop = await app(merchant);
    const { context, page, pageErrors } = await openPage(browser);
    await page.goto(`${shop.origin}/static/landing?ref=${merchant.slug}`);
    const detected = await page.evaluate(() => window.svc('detect'));
    expect(detected).toEqual({ ok: true, cookieId: expect.stringMatching(/^ck_[0-9A-Za-z]{22}$/) });
    const response = await page.goto(`${shop.origin}/combined/pricing?ref=${merchant.slug}`);
    // The middleware was answered the visit's click: the cookie stays as it is.
    expect((await response!.allHeaders())['set-cookie']).toBeUndefined();
    expect(await page.evaluate(() => window.svc('detect'))).toEqual({ ok: true, cookieId: detected.cookieId });
    expect((await svcCookie(context, shop.origin))?.value).toBe(detected.cookieId);
    expect((await clicksOf(merchant.id)).map((click) => click.cookie_id)).toEqual([detected.cookieId]);
    // A genuinely new visit: another partner's link.
    await page.goto(`${shop.origin}/combined/landing?ref=o-${merchant.slug}`);
    const switched = await page.evaluate(() => window.svc('detect'));
    expect(switched.cookieId).not.toBe(detected.cookieId);
    expect((await clicksOf(merchant.id)).map((click) => [click.cookie_id, click.affiliate_id])).toEqual([
      [detected.cookieId, merchant.affiliate.id],
      [switched.cookieId, other.body.data.affiliate.id],
    ]);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('the Fetch-style referralCookie (Next.js middleware, Hono, Remix) does the same', async () => {
    const merchant = await createMerchant({ click_window_days: 14 });
    const shop = await app(merchant);
    const { context, page } = await openPage(browser);
    await page.goto(`${shop.origin}/edge/landing?ref=${merchant.slug}`);
    const cookie = await svcCookie(context, shop.origin);
    expect(cookie?.value).toMatch(/^ck_[0-9A-Za-z]{22}$/);
    expect(cookie?.httpOnly).toBe(false);
    expectLifetime(cookie!, 14 * DAY);
    const [click] = await clicksOf(merchant.id);
    expect(click).toMatchObject({
      cookie_id: cookie!.value,
      ip: '127.0.0.1',
      user_agent: await page.evaluate(() => navigator.userAgent),
    });
    await context.close();
  });

  it('a bot following the link records nothing and gets no cookie', async () => {
    const merchant = await createMerchant();
    const shop = await app(merchant);
    const { context, page } = await openPage(browser, { userAgent: GOOGLEBOT_UA });
    const response = await page.goto(`${shop.origin}/landing?ref=${merchant.slug}`);
    expect(response!.status()).toBe(200);
    expect(await svcCookie(context, shop.origin)).toBeUndefined();
    await page.goto(`${shop.origin}/edge/landing?ref=${merchant.slug}`);
    expect(await svcCookie(context, shop.origin)).toBeUndefined();
    expect(await clicksOf(merchant.id)).toEqual([]);
    await context.close();
  });

  it('the service never answers: the page is served within the timeout, and the cookie holds the slug for 60 days', async () => {
    const merchant = await createMerchant();
    const silent = await startSilentService();
    try {
      const shop = await app(merchant, { SVC_BASE_URL: silent.baseUrl, SVC_TIMEOUT_MS: '400' });
      const { context, page } = await openPage(browser);
      await page.goto(`${shop.origin}/backend/cookie`); // a first visit, so that the timing below is the middleware's wait alone
      const started = Date.now();
      const response = await page.goto(`${shop.origin}/landing?ref=${merchant.slug}`);
      const elapsed = Date.now() - started;
      expect(response!.status()).toBe(200);
      expect(await page.textContent('h1')).toBe('Landing');
      expect(elapsed).toBeGreaterThanOrEqual(380);
      expect(elapsed).toBeLessThan(3_000); // far below a hung request; generous for a busy machine
      const cookie = await svcCookie(context, shop.origin);
      expect(cookie?.value).toBe(merchant.slug);
      expectLifetime(cookie!, 60 * DAY);
      const warnings = await (await page.request.get(`${shop.origin}/backend/warnings`)).json();
      expect(warnings).toEqual([
        expect.stringMatching(
          new RegExp(`click for ref "${merchant.slug}" not recorded .*the cookie holds the slug instead`),
        ),
      ]);
      await context.close();
    } finally {
      await silent.close();
    }
  });

  it('the service is down (nothing listens): the page is served, with the slug cookie', async () => {
    const merchant = await createMerchant();
    const silent = await startSilentService();
    const deadUrl = silent.baseUrl;
    await silent.close(); // the port is free again: connections are refused
    const shop = await app(merchant, { SVC_BASE_URL: deadUrl });
    const { context, page } = await openPage(browser);
    const response = await page.goto(`${shop.origin}/landing?ref=${merchant.slug}`);
    expect(response!.status()).toBe(200);
    expect((await svcCookie(context, shop.origin))?.value).toBe(merchant.slug);
    await context.close();
  });

  describe('the first-party path: <script src="/_aff/snippet.js" data-endpoint="/_aff">', () => {
    /** Follows the referral link to a page with the first-party snippet tag; `requested` collects every URL the page asked for. */
    async function landOnProxiedPage(
      merchant: Merchant,
      shop: MerchantApp,
      requested: string[] = [],
    ): Promise<{ context: BrowserContext; page: Page; clickSetCookie: Promise<string | undefined> }> {
      const { context, page, pageErrors } = await openPage(browser);
      await watchCookieWrites(context);
      page.on('request', (r) => requested.push(r.url()));
      const clickResponse = page.waitForResponse((r) =>
        r.url().endsWith(`/_aff/public/organizations/${merchant.id}/clicks`),
      );
      await page.goto(`${shop.origin}/landing?ref=${merchant.slug}`);
      const detected = await page.evaluate(() => window.svc('detect'));
      expect(detected.ok, JSON.stringify(detected)).toBe(true);
      expect(pageErrors).toEqual([]);
      return { context, page, clickSetCookie: clickResponse.then(async (r) => (await r.allHeaders())['set-cookie']) };
    }

    it("the snippet and its calls go through the merchant's origin only; the cookie is set by that origin's response with the program's lifetime; the click carries the visitor's address", async () => {
      const merchant = await createMerchant({ click_window_days: 45 });
      const shop = await app(merchant, { SVC_MODE: 'proxy' });
      const requested: string[] = [];
      const { context, page, clickSetCookie } = await landOnProxiedPage(merchant, shop, requested);

      // Nothing left the merchant's origin: no third-party host for an ad blocker to block.
      expect(requested.filter((url) => !url.startsWith(shop.origin))).toEqual([]);
      expect(requested).toContain(`${shop.origin}/_aff/snippet.js`);

      const cookie = await svcCookie(context, shop.origin);
      expect(cookie?.value).toMatch(/^ck_[0-9A-Za-z]{22}$/);
      expect(await clickSetCookie).toBe(`svc_aff=${cookie!.value}; Path=/; Max-Age=${45 * DAY}; SameSite=Lax`);
      expect(await page.evaluate(() => window.cookieWrites)).toEqual([]); // written by Set-Cookie, not by script
      expect(cookie).toMatchObject({ path: '/', sameSite: 'Lax', httpOnly: false });
      expectLifetime(cookie!, 45 * DAY);

      const [click] = await clicksOf(merchant.id);
      expect(click).toMatchObject({
        cookie_id: cookie!.value,
        ip: '127.0.0.1',
        user_agent: await page.evaluate(() => navigator.userAgent),
      });

      // Signup through the same path.
      await page.goto(`${shop.origin}/signup`);
      expect(await page.evaluate(() => window.svc('trial', 'cus_first_party_1'))).toEqual({ ok: true, deduped: false });
      expect((await merchant.api.get('/api/customers/cus_first_party_1')).body.data.customer).toMatchObject({
        click_id: click.id,
      });
      await context.close();
    });

    it("a visitor address the browser sends itself is ignored: to the merchant's path (not passed on) and to the service directly (refused by CORS)", async () => {
      const merchant = await createMerchant();
      const shop = await app(merchant, { SVC_MODE: 'proxy' });
      const { context, page } = await openPage(browser);
      await page.goto(`${shop.origin}/signup`);
      const body = JSON.stringify({ ref: merchant.slug });
      const viaProxy = await page.evaluate(
        async ({ org, body }) =>
          (
            await fetch(`/_aff/public/organizations/${org}/clicks`, {
              method: 'POST',
              body,
              headers: { 'X-Visitor-IP': '6.6.6.6' },
            })
          ).status,
        { org: merchant.id, body },
      );
      expect(viaProxy).toBe(201);
      const direct = await page.evaluate(
        async ({ url, body }) => {
          try {
            return (
              await fetch(url, {
                method: 'POST',
                body,
                headers: { 'X-Visitor-IP': '6.6.6.6', Authorization: 'Bearer svc-guess' },
              })
            ).status;
          } catch (e) {
            return String(e);
          }
        },
        { url: `${service}/public/organizations/${merchant.id}/clicks`, body },
      );
      expect(direct).toMatch(/TypeError/);
      expect((await clicksOf(merchant.id)).map((c) => c.ip)).toEqual(['127.0.0.1']);
      await context.close();
    });

    it("without the organization's key the service does not believe the proxy: the click carries the merchant server's address", async () => {
      const merchant = await createMerchant();
      const shop = await app(merchant, { SVC_MODE: 'proxy', SVC_PROXY_WITHOUT_KEY: '1' });
      const { context, clickSetCookie } = await landOnProxiedPage(merchant, shop);
      expect(await clickSetCookie).toMatch(/^svc_aff=ck_/);
      expect((await clicksOf(merchant.id)).map((c) => c.ip)).toEqual([MERCHANT_SERVER_ADDRESS]);
      await context.close();
    });
  });
});
