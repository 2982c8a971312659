import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { fromRepoRoot } from '../../../server/src/paths.js';

export const WEB_DIST = fromRepoRoot('web/dist');

/**
 * `npm run build`'s web half (vite build into web/dist), as a child process: the tests serve what
 * npm start would. Once per test run: the test files that serve the dashboard run in parallel
 * workers (children of one vitest process), and a second build would empty web/dist under the
 * first one's service. A lock directory serializes them; a marker names the run that built.
 */
export function buildDashboard(): void {
  const lock = fromRepoRoot('web/.build-lock');
  const marker = join(WEB_DIST, `.built-for-${process.ppid}`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock left by a killed run is stale after 3 minutes (a build takes seconds).
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 180_000) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error('web/.build-lock held for 3 minutes');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    if (!existsSync(marker)) {
      build();
      writeFileSync(marker, '');
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function build(): void {
  execFileSync(process.execPath, [fromRepoRoot('node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], {
    cwd: fromRepoRoot('web'),
    stdio: 'pipe',
    // vitest sets NODE_ENV=test, which would bundle React's development build.
    env: { ...process.env, NODE_ENV: 'production' },
  });
}

/** The JavaScript the page loads before anything is clicked: index.html's module script and its modulepreloads, gzipped. */
export function initialJavaScript(): { files: string[]; gzipBytes: number; lazy: string[] } {
  const html = readFileSync(join(WEB_DIST, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/dashboard\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  const gzipBytes = files.reduce((sum, file) => sum + gzipSync(readFileSync(join(WEB_DIST, file)), { level: 9 }).length, 0);
  const lazy = readdirSync(join(WEB_DIST, 'assets')).filter((f) => f.endsWith('.js') && !files.includes(`assets/${f}`));
  return { files, gzipBytes, lazy };
}

export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 375, height: 740 };

/**
 * Screenshots of the page at both sizes: on failure (into .tmp/web-failures, to look at), and of
 * every page when DASHBOARD_SCREENSHOTS names a directory (the README's come from docs/dashboard).
 */
export async function screenshots(page: Page, dir: string, name: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const size = page.viewportSize() ?? DESKTOP;
  for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
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
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.targets.join(', ')}`);
}
