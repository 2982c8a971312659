import type { IncomingMessage, ServerResponse } from 'node:http';
import { getCookieId } from '../cookie.js';
import { warner, type ServerLogger } from './log.js';
import { appendSetCookie, attributionSetCookie } from './set-cookie.js';
import type { ServerFetch } from './referral.js';
import { nodeVisit, type TrustProxy } from './visitor.js';

export const DEFAULT_PROXY_PREFIX = '/_aff';
/** The header in which the proxy passes the visitor's address; the service trusts it only with the organization's key. */
export const VISITOR_IP_HEADER = 'x-visitor-ip';
/** The service's own limit on the public endpoints' bodies (16 KiB). */
const MAX_BODY_BYTES = 16 * 1024;
const SNIPPET_REFRESH_MS = 5 * 60_000;
/** The snippet's calls wait at most 1.5 s (clicks) and 10 s (customers) themselves. */
const DEFAULT_PROXY_TIMEOUT_MS = 10_000;
/** Response headers of the service passed on to the browser. */
const PASSED_HEADERS = ['content-type', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'x-request-id'];

export interface FirstPartyProxyOptions {
  /** Base address of the service, e.g. `https://affiliates.example.com`. */
  baseUrl: string;
  /** The path of the merchant's site it answers under; default `/_aff`. */
  prefix?: string;
  /**
   * Organization API key (`svc-…`). With it the service trusts the visitor's address the proxy
   * forwards; without it every click carries the merchant server's own address (one address for
   * the click-flood rule and the per-address rate limit), which is only right for a trial.
   */
  apiKey?: string;
  /** As `data-cookie-domain` on the snippet tag, e.g. `.example.com`; default: this host only. */
  cookieDomain?: string;
  /** The visitor's address (and HTTPS) from `X-Forwarded-For` (`X-Forwarded-Proto`); see createReferralMiddleware. */
  trustProxy?: TrustProxy;
  /** Longest wait for the service, in milliseconds; default 10 000 (the snippet gives up sooner on its own). */
  timeoutMs?: number;
  /** Where failures are reported; default `console.warn`, once per kind until the service answers again. */
  logger?: ServerLogger;
  /** A Fetch implementation; default `globalThis.fetch`. */
  fetch?: ServerFetch;
}

type Handler = (
  req: IncomingMessage & { originalUrl?: string; body?: unknown },
  res: ServerResponse,
  next?: (err?: unknown) => void,
) => void;

interface CachedSnippet {
  body: Uint8Array;
  etag: string | null;
  contentType: string;
  fetchedAt: number;
}

/**
 * The snippet and its calls through the merchant's own origin:
 *
 * ```ts
 * app.use(createFirstPartyProxy({ baseUrl: 'https://affiliates.example.com', apiKey: process.env.AFFILIATE_API_KEY }));
 * // <script async src="/_aff/snippet.js" data-organization="…" data-endpoint="/_aff"></script>
 * ```
 *
 * `<prefix>/snippet.js` is the service's snippet; `<prefix>/public/…` is forwarded to the
 * service's public endpoints with the visitor's address (`X-Visitor-IP`, trusted with the key),
 * and a recorded click's `svc_aff` cookie is set by this response's `Set-Cookie`: a cookie of
 * the merchant's own domain, which browsers keep for its whole lifetime. Anything else goes to
 * `next()` (404 without one). Mount it before body parsers; one that already read the body is
 * handled too.
 */
export function createFirstPartyProxy(options: FirstPartyProxyOptions): Handler {
  if (!options || typeof options !== 'object')
    throw new TypeError('createFirstPartyProxy(options): { baseUrl } is required');
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch {
    throw new TypeError(`createFirstPartyProxy({ baseUrl }): "${options.baseUrl}" is not an absolute URL`);
  }
  const serviceBase = (base.origin + base.pathname).replace(/\/+$/, '');
  const prefix = (options.prefix ?? DEFAULT_PROXY_PREFIX).replace(/\/+$/, '');
  if (!prefix.startsWith('/'))
    throw new TypeError(`createFirstPartyProxy({ prefix }): "${prefix}" must start with "/"`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROXY_TIMEOUT_MS;
  const trustProxy = options.trustProxy ?? false;
  const fetchImpl: ServerFetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
  const log = warner(options.logger);
  if (!options.apiKey) {
    log.warn(
      'no-key',
      "createFirstPartyProxy: no apiKey, so the service records the merchant server's address for every visitor; pass the organization's API key",
    );
  }
  let snippet: CachedSnippet | undefined;

  const fail = (res: ServerResponse, status: number, message: string) => {
    if (res.headersSent) return void res.destroy();
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify({ success: false, message }));
  };

  async function loadSnippet(): Promise<CachedSnippet> {
    if (snippet && Date.now() - snippet.fetchedAt < SNIPPET_REFRESH_MS) return snippet;
    try {
      const response = await fetchImpl(`${serviceBase}/snippet.js`, {
        method: 'GET',
        headers: {},
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      snippet = {
        body: new Uint8Array(await response.arrayBuffer()),
        etag: response.headers.get('etag'),
        contentType: response.headers.get('content-type') ?? 'application/javascript; charset=utf-8',
        fetchedAt: Date.now(),
      };
      log.recovered();
    } catch (err) {
      if (!snippet) throw err;
      log.warn(
        'snippet',
        `could not refresh the snippet (${err instanceof Error ? err.message : String(err)}); serving the copy held`,
      );
      snippet.fetchedAt = Date.now(); // the held copy is good for another while; the service is not asked on every page
    }
    return snippet;
  }

  async function serveSnippet(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const held = await loadSnippet();
    const headers: Record<string, string> = {
      'content-type': held.contentType,
      'cache-control': 'public, max-age=3600, stale-while-revalidate=86400',
      'x-content-type-options': 'nosniff',
    };
    if (held.etag) headers.etag = held.etag;
    if (held.etag && req.headers['if-none-match'] === held.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    headers['content-length'] = String(held.body.byteLength);
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : held.body);
  }

  async function forward(
    req: IncomingMessage & { originalUrl?: string; body?: unknown },
    res: ServerResponse,
    servicePath: string,
  ): Promise<void> {
    const body = await readBody(req);
    if (body === undefined) return fail(res, 413, `Request body exceeds the ${MAX_BODY_BYTES / 1024} KiB limit`);
    const visit = nodeVisit(req, trustProxy);
    // Only what the service needs: never the visitor's cookies or credentials for the merchant's site.
    const headers: Record<string, string> = {
      'content-type': String(req.headers['content-type'] ?? 'text/plain;charset=UTF-8'),
    };
    if (visit.userAgent) headers['user-agent'] = visit.userAgent;
    const requestId = req.headers['x-request-id'];
    if (typeof requestId === 'string') headers['x-request-id'] = requestId;
    if (options.apiKey) {
      headers.authorization = `Bearer ${options.apiKey}`;
      if (visit.ip) headers[VISITOR_IP_HEADER] = visit.ip;
    }
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(serviceBase + servicePath, {
        method: req.method ?? 'POST',
        headers,
        body: req.method === 'GET' ? undefined : body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (err) {
      log.warn(
        'unreachable',
        `first-party proxy: the service did not answer ${servicePath} (${err instanceof Error ? err.message : String(err)})`,
      );
      return fail(res, 502, 'The affiliate attribution service did not answer; the snippet stores the referral itself');
    }
    log.recovered();
    // The link parameters' list is cacheable (the service says for how long); a click or signup never is.
    const out: Record<string, string> = {
      'cache-control': (req.method === 'GET' && response.headers.get('cache-control')) || 'no-store',
    };
    for (const name of PASSED_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) out[name] = value;
    }
    if (response.status === 201 && servicePath.endsWith('/clicks')) {
      const cookie = clickCookie(text, getCookieId(visit.cookieHeader), visit.secure, options.cookieDomain);
      if (cookie) appendSetCookie(res, cookie);
    }
    res.writeHead(response.status, out);
    res.end(text);
  }

  return function firstPartyProxy(req, res, next) {
    let pathname: string;
    try {
      pathname = new URL(req.originalUrl ?? req.url ?? '/', 'http://x').pathname;
    } catch {
      pathname = '';
    }
    const notOurs = () => (next ? next() : fail(res, 404, 'Not found'));
    if (pathname !== prefix && !pathname.startsWith(prefix + '/')) return notOurs();
    const rest = pathname.slice(prefix.length);
    let work: Promise<void>;
    if (rest === '/snippet.js' && (req.method === 'GET' || req.method === 'HEAD')) work = serveSnippet(req, res);
    else if (rest.startsWith('/public/') && req.method === 'POST') work = forward(req, res, rest);
    // The snippet reads the organization's link parameters (`?via=` after a Rewardful import) here too.
    else if (rest.startsWith('/public/') && rest.endsWith('/link-params') && req.method === 'GET')
      work = forward(req, res, rest);
    else return notOurs();
    work.catch((err: unknown) => {
      log.warn('proxy', `first-party proxy: ${pathname} failed (${err instanceof Error ? err.message : String(err)})`);
      fail(res, 502, 'The affiliate attribution service did not answer');
    });
  };
}

/** The Set-Cookie for a click the service recorded; none when it kept the cookie the visitor has. */
function clickCookie(
  text: string,
  current: string | undefined,
  secure: boolean,
  domain: string | undefined,
): string | undefined {
  let click: { cookie_id?: unknown; cookie_max_age_seconds?: unknown; kept?: unknown } | undefined;
  try {
    click = (JSON.parse(text) as { data?: { click?: typeof click } } | null)?.data?.click ?? undefined;
  } catch {
    return undefined;
  }
  if (!click || typeof click.cookie_id !== 'string') return undefined;
  if (click.kept === true && click.cookie_id === current) return undefined;
  const maxAgeSeconds = typeof click.cookie_max_age_seconds === 'number' ? click.cookie_max_age_seconds : 0;
  return attributionSetCookie(click.cookie_id, { maxAgeSeconds, secure, domain });
}

/** The request's body, up to the service's limit (undefined: over it), whether or not a body parser read it first. */
async function readBody(req: IncomingMessage & { body?: unknown }): Promise<string | undefined> {
  let text: string;
  if (typeof req.body === 'string') text = req.body;
  else if (req.body instanceof Uint8Array) text = new TextDecoder().decode(req.body);
  else if (req.body !== undefined && req.readableEnded) text = JSON.stringify(req.body);
  else {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) return undefined;
      chunks.push(chunk);
    }
    text = new TextDecoder().decode(concat(chunks, size));
  }
  return new TextEncoder().encode(text).byteLength > MAX_BODY_BYTES ? undefined : text;
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return all;
}
