import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router } from 'express';
import { fromRepoRoot } from '../paths.js';

/**
 * The merchant dashboard (web/) and the partner portal (web/src/portal, at /portal): single-page apps built by `npm run build` (Vite) into web/dist,
 * served here with no CDN. Hashed assets (`/dashboard/assets/*-<hash>.js`) are cached for a year
 * (`immutable`); the page itself is revalidated on every load, so a new build is picked up at once.
 * Every other path under /dashboard answers the page: the app routes in the browser.
 *
 * Its policy lets the page run its own scripts and styles, and call only its own origin. Images
 * may also come from any https address: the merchant's logo (modules/branding) is theirs to host.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; font-src 'self'; connect-src 'self'; " +
  "manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export function dashboardRouter(distDir: string = fromRepoRoot('web/dist')): Router {
  const router = Router();
  // The address the start-up log prints: someone opening it wants the dashboard, not a 404 of the API.
  router.get('/', (_req, res) => res.redirect(302, '/dashboard'));
  router.use(
    '/dashboard/assets',
    express.static(join(distDir, 'assets'), {
      immutable: true,
      maxAge: '365d',
      index: false,
      fallthrough: false,
      setHeaders: (res) => res.setHeader('Cross-Origin-Resource-Policy', 'same-origin'),
    }),
  );
  // Two entries of one build, sharing the hashed assets and the policy: the dashboard, and the
  // partner portal (whose sign-in links carry a token in the URL: no Referer leaves the page).
  servePage(router, distDir, { mount: '/dashboard', file: 'index.html', name: 'The dashboard' });
  servePage(router, distDir, {
    mount: '/portal',
    file: 'portal.html',
    name: 'The partner portal',
    headers: { 'Referrer-Policy': 'no-referrer' },
  });
  return router;
}

/** A single-page app's page for every path under `mount`, read once, revalidated on every load. */
function servePage(
  router: Router,
  distDir: string,
  page: { mount: string; file: string; name: string; headers?: Record<string, string> },
): void {
  const path = join(distDir, page.file);
  let html: string | undefined;
  router.get([page.mount, `${page.mount}/*`], (_req, res) => {
    html ??= existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    res.setHeader('Cache-Control', 'no-cache');
    if (html === undefined) {
      res.status(503).type('text/plain').send(`${page.name} is not built: run \`npm run build\` (npm start does it).`);
      return;
    }
    res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
    for (const [name, value] of Object.entries(page.headers ?? {})) res.setHeader(name, value);
    res.type('html').send(html);
  });
}
