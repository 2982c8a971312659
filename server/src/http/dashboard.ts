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
 * Its policy lets the page run its own scripts and styles, and call only its own origin.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export function dashboardRouter(distDir: string = fromRepoRoot('web/dist')): Router {
  const router = Router();
  const pages = new Map<string, string>();
  const pageOf = (file: string) => (): string | undefined => {
    const path = join(distDir, file);
    if (!pages.has(file) && existsSync(path)) pages.set(file, readFileSync(path, 'utf8'));
    return pages.get(file);
  };
  const pageHtml = pageOf('index.html');

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
  router.get(['/dashboard', '/dashboard/*'], (_req, res) => {
    const html = pageHtml();
    res.setHeader('Cache-Control', 'no-cache');
    if (html === undefined) {
      res.status(503).type('text/plain').send('The dashboard is not built: run `npm run build` (npm start does it).');
      return;
    }
    res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
    res.type('html').send(html);
  });
  // The partner portal: the same build (its own entry, portal.html, sharing the hashed assets), the same policy.
  const portalHtml = pageOf('portal.html');
  router.get(['/portal', '/portal/*'], (_req, res) => {
    const html = portalHtml();
    res.setHeader('Cache-Control', 'no-cache');
    if (html === undefined) {
      res.status(503).type('text/plain').send('The partner portal is not built: run `npm run build` (npm start does it).');
      return;
    }
    res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.type('html').send(html);
  });
  return router;
}
