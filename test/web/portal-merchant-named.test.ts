import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromRepoRoot } from '../../server/src/paths.js';
import { describeInBrowser, launchChromium } from '../snippet/support/browser.js';
import { buildDashboard, DESKTOP } from './support/dashboard.js';
import { call } from './support/people.js';
import {
  apply,
  fromPortal,
  type MailedService,
  merchantWithProgram,
  startServiceWithMail,
  unique,
} from './support/portal.js';
import type { SmtpReceiver } from './support/smtp.js';

/**
 * Issue 47, item 8: every e-mail to a partner names the merchant and its program and closes on the
 * partner's own organization's portal (the whole working address, never a bare /portal); the
 * portal's sign-in page names the merchant. Screenshots at 1280 and 390 px go to
 * PORTAL_SCREENSHOTS, else .tmp/portal-merchant-named.
 */
const DIST = fromRepoRoot('.tmp/web-dist-portal-merchant-named');
const SHOTS = process.env.PORTAL_SCREENSHOTS ?? fromRepoRoot('.tmp/portal-merchant-named');

let smtp: SmtpReceiver;
let service: MailedService;
let base: string;

beforeAll(async () => {
  buildDashboard(DIST);
  service = await startServiceWithMail({}, { webDist: DIST });
  ({ smtp, baseUrl: base } = service);
}, 120_000);
afterAll(() => service?.close());

const merchantName = async (organizationId: string, key: Record<string, string>) =>
  (await call(base, 'GET', '/api/me', { headers: key })).body.data.organization.name as string;

describe('partner e-mails name the merchant and link to its portal', () => {
  it('the application, sign-in and decision e-mails close on /portal/<organization> and name the program', async () => {
    const m = await merchantWithProgram(base, { name: 'Friends of the Shop', signup: 'approval' });
    const merchant = await merchantName(m.organizationId, m.key);
    const portal = `${base}/portal/${m.organizationId}`;
    const slug = unique('ada');
    const email = `${slug}@partners.example`;
    expect((await apply(base, m.organizationId, m.program.id, { name: 'Ada', email, slug })).status).toBe(201);
    const application = await smtp.next(email);
    expect(application.text).toContain(`— ${merchant}'s partner program "Friends of the Shop"`);
    expect(application.text).toContain(`Your partner portal: ${portal}\n`.trimEnd());

    const link = await call(base, 'POST', `/partner/api/organizations/${m.organizationId}/sign-in-links`, {
      headers: fromPortal(base),
      body: { email },
    });
    expect(link.status).toBe(202);
    const signIn = await smtp.next(email);
    expect(signIn.subject).toBe(`Sign in to ${merchant}'s partner portal`);
    expect(signIn.text).toContain(`Your partner portal: ${portal}`);

    const affiliate = (await call(base, 'GET', `/api/affiliates?email=${email}`, { headers: m.key })).body.data
      .affiliates[0];
    expect(
      (await call(base, 'PATCH', `/api/affiliates/${affiliate.id}`, { headers: m.key, body: { status: 'disabled' } }))
        .status,
    ).toBe(200);
    const declined = await smtp.next(email);
    expect(declined.text).toContain(`did not approve your application to "Friends of the Shop"`);
    expect(declined.text).toContain(`Your partner portal: ${portal}`);
    // No e-mail to a partner ends on a portal address without its organization.
    for (const mail of smtp.mails.filter((x) => x.to.includes(email)))
      expect(mail.text).not.toMatch(new RegExp(`${base}/portal(?!/${m.organizationId})`));
  });

  it('GET /partner/api/organizations/{id} names the merchant; an unknown one is 404', async () => {
    const m = await merchantWithProgram(base);
    const named = await call(base, 'GET', `/partner/api/organizations/${m.organizationId}`);
    expect(named.status).toBe(200);
    expect(named.body).toEqual({
      success: true,
      data: { organization: { id: m.organizationId, name: await merchantName(m.organizationId, m.key) } },
    });
    const unknown = await call(base, 'GET', '/partner/api/organizations/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ success: false, message: 'Organization not found' });
  });
});

describeInBrowser('the portal sign-in page, as a partner sees it', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  it(
    'names the merchant in its heading and title at 1280 and 390 px; an unknown portal says so',
    { timeout: 60_000 },
    async () => {
      const m = await merchantWithProgram(base);
      const merchant = await merchantName(m.organizationId, m.key);
      const page = await browser.newPage({ viewport: DESKTOP });
      try {
        for (const [label, viewport] of [
          ['1280', DESKTOP],
          ['390', { width: 390, height: 844 }],
        ] as const) {
          await page.setViewportSize(viewport);
          await page.goto(`${base}/portal/${m.organizationId}/sign-in`);
          await page.getByRole('heading', { name: `Sign in to ${merchant}'s partner portal` }).waitFor();
          expect(await page.title()).toBe(`Sign in · ${merchant}'s partner portal`);
          await page.screenshot({ path: `${SHOTS}/sign-in-${label}.png`, fullPage: true });
        }
        // Signed out, the portal's own address shows the same sign-in page, named.
        await page.goto(`${base}/portal/${m.organizationId}`);
        await page.getByRole('heading', { name: `Sign in to ${merchant}'s partner portal` }).waitFor();
        await page.goto(`${base}/portal/00000000-0000-4000-8000-000000000000/sign-in`);
        await page.getByRole('heading', { name: 'Partner portal not found' }).waitFor();
      } finally {
        await page.close();
      }
    },
  );
});
