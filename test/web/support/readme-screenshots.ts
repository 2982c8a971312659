/**
 * The README's overview and affiliates screenshots, on a month of generated activity (five
 * affiliates, one also selling in euros, one without activity), at desktop and 375 px:
 *
 *   DATABASE_URL=postgres://… node --import tsx test/web/support/readme-screenshots.ts <dir>
 *
 * then copy overview-*.png and affiliates-*.png from <dir> into docs/dashboard/. Not a test: the
 * same pages are tested in test/web/dashboard.test.ts and dashboard-lists.test.ts.
 */
import { launchChromium } from '../../snippet/support/browser.js';
import { buildDashboard, screenshots, signedInPage } from './dashboard.js';
import { call, ownerSession, startService } from './people.js';

const out = process.argv[2];
if (!out) throw new Error('usage: readme-screenshots.ts <directory for the PNG files>');
buildDashboard();
const service = await startService();
const base = service.baseUrl;
try {
  const owner = await ownerSession(base, 'Acme Inc');
  const key = { authorization: `Bearer ${owner.apiKey}` };
  const program = await call(base, 'POST', '/api/programs', {
    headers: key,
    body: { name: 'Main', commission_value: 30 },
  });
  const programId = program.body.data.program.id;
  const people = [
    ['omar@reviews.example', 'Omar Reviews', 'omar', 1.0],
    ['sam@deals.example', 'Sam Deals', 'sam', 0.9],
    ['lea@blog.example', 'Lea Blog', 'lea', 0.8],
    ['jane@example.com', 'Jane Partner', 'jane', 0.7],
    ['new@partner.example', 'Noah Newcomer', 'noah', 0],
  ] as const;
  for (const [email, name, slug] of people) {
    const r = await call(base, 'POST', '/api/affiliates', {
      headers: key,
      body: { email, name, slug, program_id: programId },
    });
    if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  }
  let seed = 7;
  const rand = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const day = 86_400_000;
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  let n = 0;
  for (let d = 29; d >= 0; d--) {
    for (const [, , slug, weight] of people) {
      if (!weight) continue;
      const clicks = Math.round(rand() * 5 * weight);
      for (let c = 0; c < clicks; c++) {
        const at = new Date(today - d * day + Math.floor(rand() * 20) * 3_600_000 + 60_000);
        if (at.getTime() > Date.now()) continue;
        const click = await call(base, 'POST', '/api/clicks', {
          headers: key,
          body: { ref: slug, occurred_at: at.toISOString() },
        });
        if (rand() < 0.35) {
          const customer = `cus_${++n}`;
          await call(base, 'POST', '/api/customers', {
            headers: key,
            body: { customer_id: customer, click_id: click.body.data.click.id },
          });
          if (rand() < 0.6) {
            const r = await call(base, 'POST', '/api/conversions', {
              headers: key,
              body: {
                external_id: `in_${n}`,
                amount: rand() < 0.5 ? 49 : 99,
                customer_id: customer,
                occurred_at: at.toISOString(),
              },
            });
            if (r.status !== 201) throw new Error(JSON.stringify(r.body));
          }
        }
      }
    }
  }
  // Lea also sells to European customers, in euros.
  for (let i = 0; i < 3; i++) {
    await call(base, 'POST', '/api/conversions', {
      headers: key,
      body: {
        external_id: `eu_${i}`,
        amount: 45,
        currency: 'EUR',
        ref: 'lea',
        occurred_at: new Date(today - (3 + i * 5) * day).toISOString(),
      },
    });
  }
  const browser = await launchChromium();
  const { page } = await signedInPage(browser, base, owner.cookie, { bypassCSP: false });
  await page.goto(`${base}/dashboard/overview`);
  await page.getByRole('region', { name: 'Top affiliates' }).getByRole('row').nth(4).waitFor();
  await page.getByLabel('Currency').selectOption('USD');
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(500);
  await screenshots(page, out, 'overview');
  await page.goto(`${base}/dashboard/affiliates`);
  await page.getByText('Clicks').first().waitFor();
  await page.waitForLoadState('networkidle');
  await screenshots(page, out, 'affiliates');
  await browser.close();
} finally {
  await service.close();
}
