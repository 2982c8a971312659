import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';
import { merchant as importTarget, runImport } from '../imports/import-helpers.js';
import { startRewardfulStandin, type Standin } from '../imports/rewardful-standin.js';
import {
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

/**
 * Old links keep working (issue 47, item 4): the snippet, with the README's tag unchanged, honours
 * every one of the organization's link parameters (GET /api/link-params), which an import extends
 * with its source's (Rewardful's `?via=`).
 */

const SECRET = 'rw-secret-links';
let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

async function affiliateOfCookie(cookieId: string): Promise<string | undefined> {
  const { db } = await testServer();
  const rows = await db.orm.em
    .getConnection()
    .execute<{ affiliate_id: string }[]>('select affiliate_id from clicks where cookie_id = ?', [cookieId]);
  return rows[0]?.affiliate_id;
}

async function clickCount(organizationId: string): Promise<number> {
  const { db } = await testServer();
  const [row] = await db.orm.em
    .getConnection()
    .execute<{ n: string }[]>('select count(*) as n from clicks where organization_id = ?', [organizationId]);
  return Number(row.n);
}

describeInBrowser('link parameters in the snippet (Chromium)', () => {
  let browser: Browser;
  let site: MerchantSite;
  let service: string;
  let standin: Standin;

  beforeAll(async () => {
    service = (await testServer()).baseUrl;
    browser = await launchChromium();
    site = await startMerchantSite();
    standin = await startRewardfulStandin(SECRET, {
      affiliates: [
        {
          id: 'rw-ada',
          created_at: '2024-01-02T10:00:00.000Z',
          first_name: 'Ada',
          last_name: 'Lovelace',
          email: 'ada@example.com',
          state: 'active',
          links: [
            { id: 'l1', url: 'https://example.com/?via=ada', token: 'ada' },
            { id: 'l2', url: 'https://example.com/?via=ada-blog', token: 'ada-blog' },
          ],
        },
      ],
      referrals: [],
      payouts: [],
      commissions: [],
    });
    process.env.IMPORT_REWARDFUL_API_BASE_URL = standin.url;
  });

  afterAll(async () => {
    delete process.env.IMPORT_REWARDFUL_API_BASE_URL;
    await standin?.close();
    await browser?.close();
    await site?.close();
  });

  const landingOf = (organizationId: string, base = service) =>
    site.page(`/${unique('shop')}/landing`, html('<h1>Landing</h1>', readmeEmbedCode(base, organizationId)));

  it('an imported Rewardful program attributes a ?via= click to the imported partner, with the README tag unchanged', async () => {
    const m = await importTarget();
    // A dry run changes nothing, the import itself adds `via`.
    expect((await runImport(m.api, m.programId, 'rewardful', { api_secret: SECRET }, true)).status).toBe('succeeded');
    expect((await m.api.get('/api/me')).body.data.organization.link_params).toEqual(['ref']);
    expect((await runImport(m.api, m.programId, 'rewardful', { api_secret: SECRET })).status).toBe('succeeded');
    expect((await m.api.get('/api/me')).body.data.organization.link_params).toEqual(['ref', 'via']);
    const ada = (await m.api.get('/api/affiliates')).body.data.affiliates.find(
      (a: { email: string }) => a.email === 'ada@example.com',
    );
    expect(ada).toBeDefined();

    const landing = landingOf(m.id);
    const { context, page, pageErrors } = await openPage(browser);
    for (const token of ['ada-blog', 'ada']) {
      await page.goto(`${landing}?utm_source=newsletter&via=${token}`);
      const detected = await page.evaluate(() => window.svc('detect'));
      expect(detected.ok, JSON.stringify(detected)).toBe(true);
      expect((await svcCookie(context, landing))!.value).toBe(detected.cookieId);
      expect(await affiliateOfCookie(detected.cookieId!)).toBe(ada.id);
    }
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('the list decides: ?via= records nothing until `via` is added, and `ref` stops attributing once removed', async () => {
    const m = await createMerchant();
    const landing = landingOf(m.id);
    const first = await openPage(browser);
    await first.page.goto(`${landing}?via=${m.slug}`);
    expect(await first.page.evaluate(() => window.svc('detect'))).toEqual({ ok: false, error: 'no_ref' });
    expect(await clickCount(m.id)).toBe(0);
    await first.context.close();

    expect((await m.api.put('/api/link-params', { link_params: ['via'] })).status).toBe(200);
    // A new visitor (the list is cached for five minutes per browser).
    const second = await openPage(browser);
    await second.page.goto(`${landing}?ref=${m.slug}`);
    expect(await second.page.evaluate(() => window.svc('detect'))).toEqual({ ok: false, error: 'no_ref' });
    await second.page.goto(`${landing}?via=${m.slug.toUpperCase()}`);
    const detected = await second.page.evaluate(() => window.svc('detect'));
    expect(detected.ok).toBe(true);
    expect(await affiliateOfCookie(detected.cookieId!)).toBe(m.affiliate.id);
    expect(await clickCount(m.id)).toBe(1);
    expect(second.pageErrors).toEqual([]);
    await second.context.close();
  });

  it("PartnerStack's gspk carries the partner key Base64-encoded: the snippet decodes it", async () => {
    const m = await createMerchant();
    await m.api.put('/api/link-params', { link_params: ['ref', 'gspk'] });
    const landing = landingOf(m.id);
    const { context, page } = await openPage(browser);
    await page.goto(`${landing}?gspk=${encodeURIComponent(Buffer.from(m.slug).toString('base64'))}`);
    const detected = await page.evaluate(() => window.svc('detect'));
    expect(detected.ok, JSON.stringify(detected)).toBe(true);
    expect(await affiliateOfCookie(detected.cookieId!)).toBe(m.affiliate.id);
    await context.close();
  });

  it('a page without a query string asks nothing; with one, the list is read once per page', async () => {
    const m = await createMerchant();
    await m.api.put('/api/link-params', { link_params: ['ref', 'via'] });
    const proxy = await startServiceProxy(service, { match: () => false });
    try {
      const landing = landingOf(m.id, proxy.baseUrl);
      const { context, page } = await openPage(browser);
      await page.goto(landing);
      expect(await page.evaluate(() => window.svc('detect'))).toEqual({ ok: false, error: 'no_ref' });
      const listReads = () => proxy.seen.filter((r) => r.endsWith('/link-params')).length;
      expect(listReads()).toBe(0);
      await page.goto(`${landing}?via=${m.slug}`);
      const detected = await page.evaluate(() => window.svc('detect'));
      expect(detected.ok).toBe(true);
      expect(await page.evaluate(() => window.svc('detect'))).toEqual(detected);
      expect(listReads()).toBe(1);
      await context.close();
    } finally {
      await proxy.close();
    }
  });
});
