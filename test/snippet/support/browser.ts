import { existsSync, readFileSync } from 'node:fs';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe } from 'vitest';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM_PATH);

/**
 * Browser suites skip on a laptop without Chromium, but never in CI: there a missing Chromium
 * makes the launch in beforeAll fail, and with it every test of the suite.
 */
export const describeInBrowser = describe.skipIf(!chromiumAvailable && !process.env.CI);

/**
 * Chromium for the tests of the describe block this is called in: launched before them (in CI a
 * missing Chromium fails them, see describeInBrowser), closed after them. `browser()` in a test.
 */
export function chromiumForBlock(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());
  return () => {
    if (!browser)
      throw new Error(
        'Chromium is not running: chromiumForBlock() belongs in a describe block, browser() in its tests',
      );
    return browser;
  };
}

export function launchChromium(): Promise<Browser> {
  if (!chromiumAvailable) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return (server.address() as AddressInfo).port;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * The merchant's website, on an origin of its own (http://localhost:<port>, while the service is
 * http://127.0.0.1:<port>): pages are registered by path and served as HTML.
 */
export interface MerchantSite {
  origin: string;
  page(path: string, html: string): string;
  close(): Promise<void>;
}

export async function startMerchantSite(): Promise<MerchantSite> {
  const pages = new Map<string, string>();
  const server = http.createServer((req, res) => {
    const html = pages.get(new URL(req.url ?? '/', 'http://x').pathname);
    res.writeHead(html === undefined ? 404 : 200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
    });
    res.end(html ?? 'not found');
  });
  const port = await listen(server);
  const origin = `http://localhost:${port}`;
  return {
    origin,
    page(path, html) {
      pages.set(path, html);
      return origin + path;
    },
    close: () => close(server),
  };
}

/**
 * A reverse proxy in front of the service, for the network conditions the snippet must survive:
 * requests it matches are held for `delayMs` (a slow service) or answered 503 (a failing one).
 */
export interface ServiceProxy {
  baseUrl: string;
  /** Requests (method + path) the proxy has seen. */
  seen: string[];
  close(): Promise<void>;
}

export async function startServiceProxy(
  target: string,
  options: { match: (req: IncomingMessage) => boolean; delayMs?: number; fail?: boolean },
): Promise<ServiceProxy> {
  const seen: string[] = [];
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const upstream = http.request(
      target + req.url,
      { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    upstream.end(body);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`);
      const body = Buffer.concat(chunks);
      if (!options.match(req)) return forward(req, res, body);
      if (options.fail) {
        res.writeHead(503, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
        res.end(JSON.stringify({ success: false, message: 'Service temporarily unavailable; safe to retry' }));
        return;
      }
      const timer = setTimeout(() => forward(req, res, body), options.delayMs ?? 0);
      res.on('close', () => clearTimeout(timer));
    });
  });
  const port = await listen(server);
  return { baseUrl: `http://127.0.0.1:${port}`, seen, close: () => close(server) };
}

/**
 * The README's embed code, taken verbatim from its "Tracking snippet" section (so that the tests
 * prove the guide merchants copy), with the service address and organization id filled in.
 */
export function readmeEmbedCode(baseUrl: string, organizationId: string): string {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Tracking snippet'));
  const block = /```html\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README: no ```html block in the "Tracking snippet" section');
  const code = block[1];
  if (!code.includes('{base_url}/snippet.js') || !code.includes('YOUR_ORGANIZATION_ID')) {
    throw new Error('README embed code lost its {base_url} / YOUR_ORGANIZATION_ID placeholders');
  }
  return code.replaceAll('{base_url}', baseUrl).replaceAll('YOUR_ORGANIZATION_ID', organizationId);
}

export const html = (body: string, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>Merchant</title>${head}</head><body>${body}</body></html>`;

/** A page of its own context, with its console and uncaught errors recorded. */
export interface ObservedPage {
  context: BrowserContext;
  page: Page;
  warnings: string[];
  pageErrors: string[];
}

export async function openPage(
  browser: Browser,
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<ObservedPage> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const warnings: string[] = [];
  const pageErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'warning' || m.type() === 'error') warnings.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  return { context, page, warnings, pageErrors };
}

export async function svcCookie(context: BrowserContext, url: string) {
  return (await context.cookies(url)).find((c) => c.name === 'svc_aff');
}
