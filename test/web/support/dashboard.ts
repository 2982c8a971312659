import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { fromRepoRoot } from '../../../server/src/paths.js';
import { PASSWORD } from './people.js';

export const WEB_DIST = fromRepoRoot('web/dist');

/**
 * `npm run build`'s web half (vite build into web/dist, or the directory given), as a child process: the tests serve what
 * npm start would. Once per test run: the test files that serve the dashboard run in parallel
 * workers (children of one vitest process), and a second build would empty web/dist under the
 * first one's service. A lock directory serializes them; a marker names the run that built.
 */
export function buildDashboard(outDir: string = WEB_DIST): void {
  const lock = fromRepoRoot('web/.build-lock');
  const marker = join(outDir, `.built-for-${process.ppid}`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock left by a killed run is stale after 3 minutes (a build takes seconds).
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 180_000)
        rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error('web/.build-lock held for 3 minutes');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    if (!existsSync(marker)) {
      build(outDir);
      writeFileSync(marker, '');
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function build(outDir: string): void {
  execFileSync(
    process.execPath,
    [fromRepoRoot('node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn', '--outDir', outDir, '--emptyOutDir'],
    {
      cwd: fromRepoRoot('web'),
      stdio: 'pipe',
      // vitest sets NODE_ENV=test, which would bundle React's development build.
      env: { ...process.env, NODE_ENV: 'production' },
    },
  );
}

/** The JavaScript the page loads before anything is clicked: index.html's module script and its modulepreloads, gzipped. */
export function initialJavaScript(): { files: string[]; gzipBytes: number; lazy: string[] } {
  const html = readFileSync(join(WEB_DIST, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/dashboard\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
  const gzipBytes = files.reduce(
    (sum, file) => sum + gzipSync(readFileSync(join(WEB_DIST, file)), { level: 9 }).length,
    0,
  );
  const lazy = readdirSync(join(WEB_DIST, 'assets')).filter((f) => f.endsWith('.js') && !files.includes(`assets/${f}`));
  return { files, gzipBytes, lazy };
}

export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 375, height: 740 };

/**
 * A browser context signed in to the dashboard on `base` with a session cookie (`name=value`, as
 * ownerSession and signIn give it), and a page of it. At DESKTOP size, CSP bypassed (axe is
 * injected) unless `options` say otherwise.
 */
export async function signedInPage(
  browser: Browser,
  base: string,
  cookie: string,
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: DESKTOP, bypassCSP: true, ...options });
  const [name, ...value] = cookie.split('=');
  await context.addCookies([{ name: name, value: value.join('='), url: base }]);
  return { context, page: await context.newPage() };
}

/** Signs in through the dashboard's own sign-in page, as a person would (`email` with the test PASSWORD), up to the overview. */
export async function signInOnPage(page: Page, base: string, email: string): Promise<void> {
  await page.goto(`${base}/dashboard/sign-in`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/dashboard/overview');
}

/** The page's uncaught errors, as they happen (a test expects none at its end). */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

/**
 * Screenshots of the page at both sizes: on failure (into .tmp/web-failures, to look at), and of
 * every page when DASHBOARD_SCREENSHOTS names a directory (the README's come from docs/dashboard).
 */
export async function screenshots(page: Page, dir: string, name: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const size = page.viewportSize() ?? DESKTOP;
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150);
    await page.screenshot({ path: join(dir, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(size);
}

export const FAILURE_DIR = fromRepoRoot('.tmp/web-failures');

export async function capture(page: Page, name: string): Promise<void> {
  const dir = process.env.DASHBOARD_SCREENSHOTS;
  if (dir) await screenshots(page, dir, name);
}

/** Runs a browser test body; on failure, the page at desktop and phone sizes into FAILURE_DIR. */
export async function withFailureScreenshots(page: Page, name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    await screenshots(page, FAILURE_DIR, name).catch(() => undefined);
    throw err;
  }
}

/** axe-core's serious and critical violations on the page as it stands (the page's context bypasses CSP to inject it). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const source = readFileSync(fromRepoRoot('node_modules/axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: source });
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
            opts: object,
          ) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 3),
    }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.targets.join(', ')}`);
}

/**
 * What scrolls sideways on the page as it stands: the page itself (its scrolling element wider than
 * the window), any table wider than the window, and any table frame that scrolls inside (on a
 * phone, the dashboard's tables are cards: nothing should).
 */
export async function sidewaysScrolling(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const width = window.innerWidth;
    const root = document.scrollingElement ?? document.documentElement;
    if (root.scrollWidth > width) problems.push(`the page is ${root.scrollWidth}px wide in a ${width}px window`);
    for (const table of Array.from(document.querySelectorAll('table'))) {
      const name = table.closest('[aria-label]')?.getAttribute('aria-label') ?? 'a table';
      const box = table.getBoundingClientRect();
      if (box.width > width || box.right > width + 0.5)
        problems.push(`table "${name}" is ${Math.round(box.width)}px wide (right edge at ${Math.round(box.right)}px)`);
      const frame = table.parentElement!;
      if (frame.scrollWidth > frame.clientWidth)
        problems.push(
          `table "${name}" scrolls sideways inside its frame (${frame.scrollWidth}px in ${frame.clientWidth}px)`,
        );
    }
    return problems;
  });
}
