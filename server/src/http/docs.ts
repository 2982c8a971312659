import { readFileSync } from 'node:fs';
import { fromRepoRoot } from '../paths.js';
import { createRequire } from 'node:module';
import { Router } from 'express';

/**
 * GET /openapi.json: the committed document (openapi/openapi.json, kept equal to the contract by
 * `npm run openapi:check`), with `servers` set to this deployment's base URL and legacy host.
 * GET /docs: the interactive API reference (Scalar), its script served from node_modules and its
 * text in system fonts, so the page asks nothing of any origin but this one. Both are public.
 */

const DOCUMENT_PATH = fromRepoRoot('openapi/openapi.json');
const SCALAR_BUNDLE_PATH = createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js');

export interface DocsOptions {
  /** Base URL of the service (`{base_url}`): configured, never the request's Host. */
  PUBLIC_BASE_URL: string;
  /** The older host that behaves identically (`{legacy_base_url}`), listed second. */
  LEGACY_BASE_URL?: string;
}

/**
 * The page needs its own scripts and the styles Scalar injects; it loads nothing from elsewhere
 * and calls only this origin. Replaces the API's `default-src 'none'` policy for these routes.
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

// Not "api-reference": the standalone bundle, as it loads, looks for an element with that id and
// mounts a second, unconfigured reference beside it (its HTML API: no document, so grey loading
// placeholders fill the first screen; default fonts and the hosted AI agent, so requests to
// fonts.scalar.com and proxy.scalar.com that the policy above blocks, each a console error).
const MOUNT_ID = 'reference';

// The empty data: icon, because without one browsers ask for /favicon.ico and log its 404 as a
// console error.
const DOCS_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Affiliate Attribution API reference</title>
    <link rel="icon" href="data:," />
  </head>
  <body>
    <div id="${MOUNT_ID}"></div>
    <script src="/docs/scalar.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

// A separate file rather than an inline script, so that a strict Content-Security-Policy holds.
// No default fonts (they come from Scalar's CDN), no telemetry, no developer toolbar, no hosted AI
// agent (it searches Scalar's registry through proxy.scalar.com); every tag open, so the whole
// reference reads (and searches) as one page. No proxyUrl: in the reference's request modal Scalar
// then sends requests directly, never through proxy.scalar.com.
const INIT_JS = `Scalar.createApiReference('#${MOUNT_ID}', {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: 'never',
  hideClientButton: true,
  defaultOpenAllTags: true,
  agent: { disabled: true },
  documentDownloadType: 'json',
  // Scalar's theme names its CDN-hosted fonts; system fonts instead, so none is ever fetched.
  customCss: ':root, .light-mode, .dark-mode { --scalar-font: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; --scalar-font-code: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }',
});
`;

export function docsRouter(options: DocsOptions): Router {
  const document = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8')) as { servers?: unknown };
  const router = Router();

  router.get('/openapi.json', (_req, res) => {
    const servers = [
      { url: options.PUBLIC_BASE_URL.replace(/\/+$/, ''), description: 'This service.' },
      ...(options.LEGACY_BASE_URL
        ? [{ url: options.LEGACY_BASE_URL.replace(/\/+$/, ''), description: 'Legacy host; behaves identically.' }]
        : []),
    ];
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json({ ...document, servers });
  });

  router.get('/docs', (_req, res) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.type('html').setHeader('Cache-Control', 'public, max-age=300').send(DOCS_HTML);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').setHeader('Cache-Control', 'public, max-age=300').send(INIT_JS);
  });
  router.get('/docs/scalar.js', (_req, res, next) => {
    res.sendFile(
      SCALAR_BUNDLE_PATH,
      { maxAge: '1d', headers: { 'Content-Type': 'application/javascript; charset=utf-8' } },
      (err) => {
        if (err) next(err);
      },
    );
  });
  return router;
}
