import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, type Api } from '../support/api.js';
import { testServer } from '../support/server.js';
import {
  CHROMIUM_PATH,
  chromiumAvailable,
  describeInBrowser,
  html,
  launchChromium,
  openPage,
  readmeEmbedCode,
  startMerchantSite,
  startServiceProxy,
  svcCookie,
  type MerchantSite,
} from './support/browser.js';

/** The merchant page's globals these tests read: the snippet's `svc`, and what the test pages record. */
declare global {
  interface Window {
    svc: (
      command: string,
      ...args: unknown[]
    ) => Promise<{ ok: boolean; cookieId?: string; fallback?: boolean; deduped?: boolean; error?: string }>;
    results: unknown[];
    queuedBeforeLoad: number;
  }
}

type Merchant = Awaited<ReturnType<typeof createMerchant>>;

const DAY = 86_400;
let counter = 0;
const unique = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${++counter}`;

/** The service-side click behind a cookie id, straight from the database. */
async function clickByCookie(cookieId: string) {
  const { db } = await testServer();
  const rows = await db.orm.em.getConnection().execute<
    {
      id: string;
      affiliate_id: string;
      landing_url: string | null;
      referrer: string | null;
      user_agent: string | null;
      ip: string | null;
    }[]
  >('select id, affiliate_id, landing_url, referrer, user_agent, ip from clicks where cookie_id = ?', [cookieId]);
  return rows;
}

async function clickCount(organizationId: string): Promise<number> {
  const { db } = await testServer();
  const [row] = await db.orm.em
    .getConnection()
    .execute<{ n: string }[]>('select count(*) as n from clicks where organization_id = ?', [organizationId]);
  return Number(row.n);
}

async function addAffiliate(merchant: Merchant, slug: string) {
  const res = await merchant.api.post('/api/affiliates', {
    email: `${slug}@example.com`,
    program_id: merchant.program.id,
    slug,
  });
  expect(res.status).toBe(201);
  return res.body.data.affiliate as { id: string; slug: string };
}

async function expectCustomer(api: Api, customerId: string) {
  const res = await api.get(`/api/customers/${customerId}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.customer;
}

describeInBrowser('tracking snippet in Chromium (merchant page on another origin)', () => {
  let browser: Browser;
  let site: MerchantSite;
  let service: string;

  beforeAll(async () => {
    service = (await testServer()).baseUrl;
    browser = await launchChromium();
    site = await startMerchantSite();
    expect(new URL(site.origin).origin).not.toBe(new URL(service).origin);
  });

  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  /** Landing and signup pages of a merchant, each with exactly the README's embed code. */
  function merchantPages(merchant: Merchant, base = service) {
    const dir = `/${unique('shop')}`;
    const embed = readmeEmbedCode(base, merchant.id);
    return {
      landing: site.page(`${dir}/landing`, html('<h1>Landing</h1>', embed)),
      signup: site.page(`${dir}/signup`, html('<h1>Sign up</h1>', embed)),
    };
  }

  it('?ref= sets svc_aff (ck_ id, path /, SameSite=Lax, max-age = click window); svc("trial") on the signup page creates the trial customer tied to the affiliate', async () => {
    const merchant = await createMerchant({ click_window_days: 30 });
    const pages = merchantPages(merchant);
    const { context, page, pageErrors } = await openPage(browser);

    await page.goto(`${pages.landing}?ref=${merchant.slug}&utm_source=news`, {
      referer: 'https://partner.example/blog',
    });
    const detected = await page.evaluate(() => window.svc('detect'));
    const cookie = await svcCookie(context, pages.landing);
    expect(cookie, 'svc_aff cookie').toBeDefined();
    expect(detected).toEqual({ ok: true, cookieId: cookie!.value });
    expect(cookie!.value).toMatch(/^ck_[0-9A-Za-z]{22}$/);
    expect(cookie!.path).toBe('/');
    expect(cookie!.sameSite).toBe('Lax');
    expect(cookie!.secure).toBe(false); // http page
    expect(cookie!.httpOnly).toBe(false);
    expect(cookie!.domain).toBe('localhost'); // host-only, first party on the merchant's site
    expect(cookie!.expires - Date.now() / 1000).toBeGreaterThan(30 * DAY - 120);
    expect(cookie!.expires - Date.now() / 1000).toBeLessThanOrEqual(30 * DAY + 5);
    expect(await page.evaluate(() => document.cookie)).toContain(`svc_aff=${cookie!.value}`);

    const [click] = await clickByCookie(cookie!.value);
    expect(click.affiliate_id).toBe(merchant.affiliate.id);
    expect(click.landing_url).toBe(`${pages.landing}?ref=${merchant.slug}&utm_source=news`);
    expect(click.user_agent).toMatch(/Chrome/);
    expect(click.ip).toMatch(/127\.0\.0\.1/);

    // Later, on another page of the site, the visitor signs up.
    await page.goto(pages.signup);
    const customerId = unique('cus');
    const result = await page.evaluate((id) => window.svc('trial', id), customerId);
    expect(result).toEqual({ ok: true, deduped: false });

    const customer = await expectCustomer(merchant.api, customerId);
    expect(customer).toMatchObject({
      customer_id: customerId,
      status: 'trial',
      affiliate_id: merchant.affiliate.id,
      program_id: merchant.program.id,
      click_id: click.id,
    });

    // The same call again (a double submit): the same customer, reported as deduped.
    expect(await page.evaluate((id) => window.svc('customer', id), customerId)).toEqual({ ok: true, deduped: true });
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('data-mode="test": the click and the signup go to the test data (seen with the test key only); a mistyped mode records nothing', async () => {
    const merchant = await createMerchant();
    // The test data has its own program and an affiliate with the same slug.
    const program = await merchant.testApi.post('/api/programs', { name: 'Test', commission_value: 10 });
    const affiliate = await merchant.testApi.post('/api/affiliates', {
      email: merchant.affiliate.email,
      program_id: program.body.data.program.id,
      slug: merchant.slug,
    });
    expect(affiliate.status).toBe(201);
    const dir = `/${unique('shop')}`;
    const tagged = (mode: string) =>
      readmeEmbedCode(service, merchant.id).replace('<script async src=', `<script data-mode="${mode}" async src=`);
    expect(tagged('test')).toContain('data-mode="test"');
    const landing = site.page(`${dir}/landing`, html('<h1>Landing</h1>', tagged('test')));
    const { context, page, pageErrors } = await openPage(browser);
    await page.goto(`${landing}?ref=${merchant.slug}`);
    const detected = await page.evaluate(() => window.svc('detect'));
    expect(detected.ok).toBe(true);
    const [click] = await clickByCookie(detected.cookieId!);
    expect(click.affiliate_id).toBe(affiliate.body.data.affiliate.id);
    const customerId = unique('cus');
    expect(await page.evaluate((id) => window.svc('trial', id), customerId)).toEqual({ ok: true, deduped: false });
    expect((await expectCustomer(merchant.testApi, customerId)).affiliate_id).toBe(affiliate.body.data.affiliate.id);
    expect((await merchant.api.get(`/api/customers/${customerId}`)).status).toBe(404);
    expect(await clickCount(merchant.id)).toBe(0);
    await context.close();

    const typo = site.page(`${dir}/typo`, html('<h1>Landing</h1>', tagged('tset')));
    const second = await openPage(browser);
    await second.page.goto(`${typo}?ref=${merchant.slug}`);
    const refused = await second.page.evaluate(() => window.svc('detect'));
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/^mode: /);
    expect(await clickCount(merchant.id)).toBe(0);
    expect(pageErrors).toEqual([]);
    await second.context.close();
  });

  it('calls made before the script loads are queued and run once it loads (the README stub returns a promise; a plain queue stub takes a callback)', async () => {
    const merchant = await createMerchant();
    const embed = readmeEmbedCode(service, merchant.id);
    const [stub, tag] = embed.split('</script>');
    expect(tag).toContain('snippet.js');
    const first = unique('cus');
    const second = unique('cus');
    const dir = `/${unique('shop')}`;
    // The README stub, then calls (before the snippet's tag, so they run before it can load).
    const readmePage = site.page(
      `${dir}/readme-stub`,
      html(
        '',
        `${stub}</script><script>
          window.results = [];
          svc('trial', ${JSON.stringify(first)}).then(function (r) { results.push(r); });
          window.queuedBeforeLoad = svc.q.length;
        </script>${tag}</script>`,
      ),
    );
    // The minimal stub of the specification, `push(arguments)`, with a callback.
    const plainPage = site.page(
      `${dir}/plain-stub`,
      html(
        '',
        `<script>
          window.svc = window.svc || function () { (svc.q = svc.q || []).push(arguments); };
          window.results = [];
          svc('customer', ${JSON.stringify(second)}, function (r) { results.push(r); });
          window.queuedBeforeLoad = svc.q.length;
        </script>${tag}</script>`,
      ),
    );

    const { context, page, pageErrors } = await openPage(browser);
    await page.goto(`${readmePage}?ref=${merchant.slug}`);
    await page.waitForFunction(() => window.results.length === 1);
    expect(await page.evaluate(() => window.queuedBeforeLoad)).toBe(1);
    expect(await page.evaluate(() => window.results)).toEqual([{ ok: true, deduped: false }]);
    const cookie = await svcCookie(context, readmePage);
    const [click] = await clickByCookie(cookie!.value);
    expect(await expectCustomer(merchant.api, first)).toMatchObject({
      status: 'trial',
      affiliate_id: merchant.affiliate.id,
      click_id: click.id,
    });

    await page.goto(plainPage);
    await page.waitForFunction(() => window.results.length === 1);
    expect(await page.evaluate(() => window.queuedBeforeLoad)).toBe(1);
    expect(await page.evaluate(() => window.results)).toEqual([{ ok: true, deduped: false }]);
    expect(await expectCustomer(merchant.api, second)).toMatchObject({
      status: 'trial',
      affiliate_id: merchant.affiliate.id,
      click_id: click.id,
    });
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('last click wins: a later visit with another ref replaces the cookie, and the signup goes to that affiliate', async () => {
    const merchant = await createMerchant();
    const other = await addAffiliate(merchant, `aff-${unique('b').replace(/_/g, '-').toLowerCase()}`);
    const pages = merchantPages(merchant);
    const { context, page } = await openPage(browser);

    await page.goto(`${pages.landing}?ref=${merchant.slug}`);
    const firstCookie = (await page.evaluate(() => window.svc('detect'))).cookieId;
    await page.goto(`${pages.landing}?ref=${other.slug}`);
    const second = await page.evaluate(() => window.svc('detect'));
    expect(second.ok).toBe(true);
    expect(second.cookieId).not.toBe(firstCookie);
    expect((await svcCookie(context, pages.landing))!.value).toBe(second.cookieId);
    expect((await clickByCookie(second.cookieId!))[0].affiliate_id).toBe(other.id);

    // A visit without ref keeps the last click.
    await page.goto(pages.landing);
    expect(await page.evaluate(() => window.svc('detect'))).toEqual({ ok: false, error: 'no_ref' });
    expect((await svcCookie(context, pages.landing))!.value).toBe(second.cookieId);

    const customerId = unique('cus');
    await page.goto(pages.signup);
    expect(await page.evaluate((id) => window.svc('trial', id), customerId)).toEqual({ ok: true, deduped: false });
    expect((await expectCustomer(merchant.api, customerId)).affiliate_id).toBe(other.id);
    await context.close();
  });

  it('a page without ref sets no cookie and records no click; svc("trial") then does nothing and says so in the console', async () => {
    const merchant = await createMerchant();
    const pages = merchantPages(merchant);
    const { context, page, warnings, pageErrors } = await openPage(browser);

    await page.goto(pages.landing);
    expect(await page.evaluate(() => window.svc('detect'))).toEqual({ ok: false, error: 'no_ref' });
    expect(await svcCookie(context, pages.landing)).toBeUndefined();
    expect(await clickCount(merchant.id)).toBe(0);

    const customerId = unique('cus');
    expect(await page.evaluate((id) => window.svc('trial', id), customerId)).toEqual({ ok: false, error: 'no_cookie' });
    expect(warnings.some((w) => w.includes('[svc]') && w.includes('no svc_aff cookie') && w.includes(customerId))).toBe(
      true,
    );
    expectError404(await merchant.api.get(`/api/customers/${customerId}`));

    // Misuse never throws into the page either.
    expect(await page.evaluate(() => window.svc('trial'))).toEqual({ ok: false, error: 'no_customer_id' });
    expect(await page.evaluate(() => window.svc('nonsense', 1))).toEqual({
      ok: false,
      error: 'unknown command nonsense',
    });
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('an unknown ref stores nothing, keeps an earlier cookie, and says so in the console', async () => {
    const merchant = await createMerchant();
    const pages = merchantPages(merchant);
    const { context, page, warnings, pageErrors } = await openPage(browser);

    await page.goto(`${pages.landing}?ref=nobody-here`);
    expect(await page.evaluate(() => window.svc('detect'))).toEqual({ ok: false, error: 'No attribution found' });
    expect(await svcCookie(context, pages.landing)).toBeUndefined();
    expect(warnings.some((w) => w.includes('"nobody-here" not tracked: No attribution found'))).toBe(true);

    await page.goto(`${pages.landing}?ref=${merchant.slug}`);
    const good = await page.evaluate(() => window.svc('detect'));
    expect(good.ok).toBe(true);
    await page.goto(`${pages.landing}?ref=still-nobody`);
    expect((await page.evaluate(() => window.svc('detect'))).ok).toBe(false);
    expect((await svcCookie(context, pages.landing))!.value).toBe(good.cookieId);
    expect(await clickCount(merchant.id)).toBe(1);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('slow service: the raw slug is stored after ~1.5 s, and POST /api/conversions with that cookie value credits the affiliate', async () => {
    const merchant = await createMerchant({ click_window_days: 7 });
    const proxy = await startServiceProxy(service, {
      match: (req) => req.method === 'POST' && /\/public\/organizations\/[^/]+\/clicks$/.test(req.url ?? ''),
      delayMs: 6_000,
    });
    try {
      const pages = merchantPages(merchant, proxy.baseUrl);
      const { context, page, pageErrors } = await openPage(browser);
      await page.goto(`${pages.landing}?ref=${merchant.slug.toUpperCase()}`);
      const started = Date.now();
      const detected = await page.evaluate(() => window.svc('detect'));
      const waited = Date.now() - started;
      expect(detected).toEqual({ ok: true, cookieId: merchant.slug, fallback: true });
      expect(waited).toBeLessThan(3_000); // the 1.5 s timeout, not the 6 s delay
      expect(proxy.seen.some((r) => r.startsWith('POST /public/organizations/'))).toBe(true);

      const cookie = await svcCookie(context, pages.landing);
      expect(cookie!.value).toBe(merchant.slug);
      expect(cookie!.sameSite).toBe('Lax');
      expect(cookie!.path).toBe('/');
      expect(cookie!.expires - Date.now() / 1000).toBeGreaterThan(60 * DAY - 120); // fallback lifetime

      // The merchant's backend reads the cookie and reports the sale with it.
      const conversion = await merchant.api.post('/api/conversions', {
        external_id: unique('in'),
        amount: 100,
        cookie_id: cookie!.value,
      });
      expect(conversion.status, JSON.stringify(conversion.body)).toBe(201);
      expect(conversion.body.data.conversion).toMatchObject({
        affiliate_id: merchant.affiliate.id,
        kind: 'initial',
        commission_amount: 30,
      });

      // And the snippet's own signup call works with the slug too (customers are not delayed).
      const customerId = unique('cus');
      await page.goto(pages.signup);
      expect(await page.evaluate((id) => window.svc('trial', id), customerId)).toEqual({ ok: true, deduped: false });
      expect(await expectCustomer(merchant.api, customerId)).toMatchObject({
        affiliate_id: merchant.affiliate.id,
        status: 'trial',
        click_id: null,
      });
      expect(pageErrors).toEqual([]);
      await context.close();
    } finally {
      await proxy.close();
    }
  });

  it('failing service (503): the raw slug is stored at once', async () => {
    const merchant = await createMerchant();
    const proxy = await startServiceProxy(service, { match: (req) => /\/clicks$/.test(req.url ?? ''), fail: true });
    try {
      const pages = merchantPages(merchant, proxy.baseUrl);
      const { context, page } = await openPage(browser);
      await page.goto(`${pages.landing}?ref=${merchant.slug}`);
      const started = Date.now();
      expect(await page.evaluate(() => window.svc('detect'))).toEqual({
        ok: true,
        cookieId: merchant.slug,
        fallback: true,
      });
      expect(Date.now() - started).toBeLessThan(1_500);
      expect((await svcCookie(context, pages.landing))!.value).toBe(merchant.slug);
      await context.close();
    } finally {
      await proxy.close();
    }
  });

  it('data-param names the referral parameter; on an https page the cookie is Secure', async () => {
    const merchant = await createMerchant();
    // https origins by the browser's request interception: the shop's page, and the service at
    // https://svc.example relayed to the real one (snippet and API alike).
    const shop = 'https://shop.example';
    const svcHost = 'https://svc.example';
    const embed = readmeEmbedCode(svcHost, merchant.id).replace(
      'data-organization=',
      'data-param="via" data-organization=',
    );
    const { context, page, pageErrors } = await openPage(browser);
    await context.route(`${shop}/**`, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: html('<h1>Shop</h1>', embed) }),
    );
    await context.route(`${svcHost}/**`, async (route) => {
      const response = await route.fetch({ url: route.request().url().replace(svcHost, service) });
      await route.fulfill({ response });
    });

    await page.goto(`${shop}/pricing?ref=ignored-param&via=${merchant.slug}`);
    const detected = await page.evaluate(() => window.svc('detect'));
    expect(detected.ok).toBe(true);
    const cookie = await svcCookie(context, shop);
    expect(cookie).toMatchObject({
      value: detected.cookieId,
      secure: true,
      sameSite: 'Lax',
      path: '/',
      domain: 'shop.example',
    });
    expect((await clickByCookie(detected.cookieId!))[0].affiliate_id).toBe(merchant.affiliate.id);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('a crawler (bot user agent) records no click and gets no cookie', async () => {
    const merchant = await createMerchant();
    const pages = merchantPages(merchant);
    const { context, page } = await openPage(browser, {
      userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    });
    await page.goto(`${pages.landing}?ref=${merchant.slug}`);
    expect(await page.evaluate(() => window.svc('detect'))).toEqual({ ok: false, error: 'bot' });
    expect(await svcCookie(context, pages.landing)).toBeUndefined();
    expect(await clickCount(merchant.id)).toBe(0);
    await context.close();
  });
});

function expectError404(res: { status: number; body: any }) {
  expect(res.status).toBe(404);
  expect(res.body.success).toBe(false);
}

describe('browser suite prerequisites', () => {
  it.runIf(process.env.CI)(
    'CI has Chromium (.ci/run installs it), so the browser suite above never skips there',
    () => {
      expect(chromiumAvailable, `no Chromium at ${CHROMIUM_PATH}`).toBe(true);
    },
  );
});
