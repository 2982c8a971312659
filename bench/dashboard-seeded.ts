/**
 * npm run bench:dashboard: every page of the merchant dashboard in Chromium (playwright-core,
 * CHROMIUM_PATH, default /usr/bin/chromium) against the service on the seeded database of the
 * ledger's benchmark (bench/seeded-database.ts; BENCH_DB to keep and reuse one), signed in as an
 * owner invited to the seeded organization.
 *
 * Each page is loaded BENCH_LOADS times (default 7) after one unmeasured load, each a fresh
 * navigation (a full page load of /dashboard/<page>, the browser's cache warm as a returning user's
 * would be). Figures come from the page's own Performance API:
 * - every /api/ call the page makes (Resource Timing: responseEnd - startTime), p50 / p95 per call;
 * - navigation timing (domInteractive, loadEventEnd);
 * - interactive: the moment the page's data is rendered and nothing is loading any more (its
 *   heading shown, no "Loading…" status left, no /api/ request pending), as performance.now(),
 *   i.e. from the start of the navigation; p50 / p95.
 * Prints the load average with the figures.
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { chromium, type Page } from 'playwright-core';
import { ADMIN_TOKEN, call, percentile, seededService } from './seeded-database.js';

const LOADS = Number(process.env.BENCH_LOADS ?? 7);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PASSWORD = 'bench dashboard password';

/** The dashboard's pages (web/src/App.tsx) and the heading each shows once rendered. */
const PAGES: [string, string][] = [
  ['overview', 'Overview'],
  ['programs', 'Programs'],
  ['affiliates', 'Affiliates'],
  ['customers', 'Customers'],
  ['commissions', 'Commissions'],
  ['integrations', 'Integrations'],
  ['developers', 'Developers'],
  ['team', 'Team'],
];

interface Load {
  interactive: number;
  domInteractive: number;
  loadEventEnd: number;
  /** ms: from the page's fetch to the last byte (what the page waits); answer: from the request sent to the first byte of the answer (what the API takes, without the browser's own queueing). */
  calls: { name: string; ms: number; answer: number }[];
}

/** One full load of a page, measured in the page. */
async function measure(page: Page, url: string, heading: string): Promise<Load> {
  await page.goto(url, { waitUntil: 'commit' });
  const interactive = await page.waitForFunction(
    (title) => {
      const h1 = document.querySelector('main h1, h1');
      if (!h1 || !h1.textContent?.includes(title)) return false;
      if (Array.from(document.querySelectorAll('[role="status"]')).some((e) => e.textContent?.includes('Loading')))
        return false;
      // Every /api/ request started has ended (a resource entry appears once its response has).
      const started = (window as unknown as { __apiStarted?: number }).__apiStarted ?? 0;
      const ended = performance
        .getEntriesByType('resource')
        .filter((e) => new URL(e.name).pathname.startsWith('/api/')).length;
      return started > 0 && ended >= started ? performance.now() : false;
    },
    heading,
    { polling: 'raf', timeout: 60_000 },
  );
  const at = (await interactive.jsonValue()) as number;
  return page.evaluate((interactiveAt) => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    const calls = performance
      .getEntriesByType('resource')
      .filter((e) => new URL(e.name).pathname.startsWith('/api/'))
      .map((e) => {
        const u = new URL(e.name);
        // Ids and times vary per load: name a call by its path and its query's keys.
        const path = u.pathname.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, ':id');
        const keys = [...u.searchParams.keys()];
        const interval = u.searchParams.get('interval');
        return {
          name: `${path}${keys.length ? `?${keys.join('&')}` : ''}${interval ? ` (${interval})` : ''}`,
          ms: (e as PerformanceResourceTiming).responseEnd - e.startTime,
          answer: (e as PerformanceResourceTiming).responseStart - (e as PerformanceResourceTiming).requestStart,
        };
      });
    return { interactive: interactiveAt, domInteractive: nav.domInteractive, loadEventEnd: nav.loadEventEnd, calls };
  }, at);
}

async function main(): Promise<void> {
  // The dashboard as `npm run build` builds it (web/dist), served by the service.
  execFileSync(process.execPath, ['../node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'], {
    cwd: 'web',
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const { base, organizationId, stop } = await seededService();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    // An owner of the seeded organization: invited by the operator, accepted, then signed in by the page.
    const email = `owner-${Date.now()}@example.com`;
    const invited = await call(
      'POST',
      `${base}/admin/organizations/${organizationId}/invitations`,
      `Bearer ${ADMIN_TOKEN}`,
      { email },
    );
    const token = new URL(invited.body.data.accept_url as string).searchParams.get('token');
    await call(
      'POST',
      `${base}/auth/invitations/accept`,
      { origin: base },
      { token, name: 'Bench Owner', password: PASSWORD },
    );
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    // Counts the /api/ requests a page starts (fetch is the typed client's transport).
    await context.addInitScript(() => {
      const w = window as unknown as { __apiStarted: number };
      w.__apiStarted = 0;
      const original = window.fetch.bind(window);
      window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
        const url = new URL(
          typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
          location.href,
        );
        if (url.pathname.startsWith('/api/')) w.__apiStarted++;
        return original(input, init);
      };
    });
    const page = await context.newPage();
    await page.goto(`${base}/dashboard/sign-in`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard\/overview/, { timeout: 60_000 });

    console.log(
      `\n${LOADS} loads of each page (after 1 unmeasured), Chromium headless, 1280x860; figures from the page's Performance API, ms`,
    );
    const problems: string[] = [];
    for (const [path, heading] of PAGES) {
      const url = `${base}/dashboard/${path}`;
      await measure(page, url, heading);
      const loads: Load[] = [];
      for (let i = 0; i < LOADS; i++) loads.push(await measure(page, url, heading));
      const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
      const interactive = sorted(loads.map((l) => l.interactive));
      const p50 = (xs: number[]) => percentile(sorted(xs), 50).toFixed(0);
      console.log(
        `\n/dashboard/${path}: interactive p50 ${percentile(interactive, 50).toFixed(0)} / p95 ${percentile(interactive, 95).toFixed(0)} (domInteractive p50 ${p50(loads.map((l) => l.domInteractive))}, load event p50 ${p50(loads.map((l) => l.loadEventEnd))})`,
      );
      if (percentile(interactive, 95) >= 1500)
        problems.push(`/dashboard/${path} interactive p95 ${percentile(interactive, 95).toFixed(0)} ms`);
      const byCall = new Map<string, number[]>();
      for (const l of loads) for (const c of l.calls) byCall.set(c.name, [...(byCall.get(c.name) ?? []), c.ms]);
      const answers = new Map<string, number[]>();
      for (const l of loads) for (const c of l.calls) answers.set(c.name, [...(answers.get(c.name) ?? []), c.answer]);
      for (const [name, times] of byCall) {
        const s = sorted(times);
        const a = sorted(answers.get(name) ?? []);
        console.log(
          `  ${name.padEnd(58)} p50 ${percentile(s, 50).toFixed(1).padStart(6)}  p95 ${percentile(s, 95).toFixed(1).padStart(6)}  (${s.length} calls; answer p50 ${percentile(a, 50).toFixed(1)} p95 ${percentile(a, 95).toFixed(1)})`,
        );
        if (percentile(s, 95) >= 200)
          problems.push(`${name} on /dashboard/${path} p95 ${percentile(s, 95).toFixed(0)} ms`);
      }
    }
    console.log(
      `\nagainst the targets (API calls p95 < 200 ms, interactive p95 < 1.5 s): ${problems.length ? `missed: ${problems.join('; ')}` : 'all met'}`,
    );
  } finally {
    console.log(
      `load average: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    await browser.close();
    await stop();
  }
}

await main();
