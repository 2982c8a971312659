import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import helmet from 'helmet';
import { ErrorMessages } from '@affiliate-attribution/contract';
import { BadRequestError } from './errors.js';
import type { Stage } from './pipeline.js';

/** The headers helmet sets with these options, as [name, value, ...], computed once: they do not depend on the request. */
function helmetHeaders(options: Parameters<typeof helmet>[0]): readonly string[] {
  const flat: string[] = [];
  const recorder = {
    setHeader: (name: string, value: string) => void flat.push(name, String(value)),
    removeHeader: () => undefined,
  };
  helmet(options)({} as never, recorder as never, () => undefined);
  return flat;
}

const commonPolicy = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: true },
  referrerPolicy: { policy: 'no-referrer' as const },
};

/** Every response outside the public tracking surface: same-origin only. */
const STRICT_SECURITY_HEADERS = helmetHeaders({ ...commonPolicy, crossOriginResourcePolicy: { policy: 'same-origin' } });
/** The snippet and /public/*: embeddable by merchants' pages on other origins. */
const EMBEDDABLE_SECURITY_HEADERS = helmetHeaders({ ...commonPolicy, crossOriginResourcePolicy: { policy: 'cross-origin' } });

/** The path of a request without its query string, as the client sent it (whichever lane, whatever mount path). */
export function pathOf(req: { url?: string; originalUrl?: string }): string {
  const url = req.originalUrl ?? req.url ?? '/';
  const end = url.indexOf('?');
  return end === -1 ? url : url.slice(0, end);
}

/**
 * Security headers. The API answers JSON only, so its policy forbids everything a browser could do
 * with a response (no scripts, no framing, no cross-origin embedding). The tracking snippet and
 * its public endpoints are loaded by merchants' pages on other origins, so they must be
 * embeddable cross-origin (Cross-Origin-Resource-Policy: cross-origin); everything else stays
 * same-origin. CORS itself is answered only under /public (see modules/tracking/tracking.http.ts):
 * no other route sends Access-Control-Allow-Origin.
 */
export const securityHeadersStage: Stage = {
  name: 'security headers',
  run(req, _res, headers) {
    const path = pathOf(req);
    const isPublic = path === '/snippet.js' || path === '/public' || path.startsWith('/public/');
    const flat = isPublic ? EMBEDDABLE_SECURITY_HEADERS : STRICT_SECURITY_HEADERS;
    for (let i = 0; i < flat.length; i += 2) headers.setHeader(flat[i]!, flat[i + 1]!);
  },
};

export function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (depth > 64 || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((item) => containsNul(item, depth + 1));
  for (const [key, item] of Object.entries(value)) if (key.includes('\u0000') || containsNul(item, depth + 1)) return true;
  return false;
}

/**
 * PostgreSQL text cannot store U+0000, and a query carrying one fails in the driver: such input is
 * refused up front with 400 (path, query string and parsed JSON body), never sent to the database.
 * A request in the hot lane's plain form is its route's path exactly, without a query string: only
 * a body can hold one there.
 */
export const nulCharactersStage: Stage = {
  name: 'NUL characters',
  needed: (route) => route.method !== 'GET',
  run(req) {
    if ((req.originalUrl ?? req.url ?? '').includes('%00') || containsNul((req as { query?: unknown }).query) || containsNul(req.body)) {
      throw new BadRequestError(ErrorMessages.nulCharacters);
    }
  },
};

export const INVALID_UTF8_MESSAGE = 'Body is not valid UTF-8';

/**
 * A body must be well-formed UTF-8 (RFC 8259). A lenient decoder turns every malformed sequence into
 * U+FFFD, so two different byte strings would become one string: one idempotency key, one
 * customer id. Such bodies are refused with 400 instead. Both lanes call this on the raw bytes,
 * before JSON parsing (body-parser's `verify` runs at the same point).
 */
export function assertUtf8Body(raw: Uint8Array): void {
  if (!isUtf8(raw)) throw new BadRequestError(INVALID_UTF8_MESSAGE);
}

/** The Content-Length a request declares (0 without one: chunked bodies are limited as they are read). */
export function declaredBodyLength(req: IncomingMessage): number {
  return Number(req.headers['content-length'] ?? 0);
}

/**
 * Express's JSON body parser for /api, /admin and /public: a declared Content-Length over `limit`
 * is refused with 413 before a byte is read (body-parser itself would read a refused body to its
 * end before answering), then body-parser reads and parses, refusing bodies that are not UTF-8.
 * Other charsets body-parser would decode (UTF-16, UTF-32) are refused with 415: one encoding,
 * checked strictly, and the hot lane (which serves UTF-8 only) answers the same.
 */
export function jsonBodyParser(options: { limit: number; type?: string[] }): RequestHandler {
  const parse = express.json({
    limit: options.limit,
    type: options.type,
    verify: (_req, _res, raw, charset) => {
      if (charset !== 'utf-8') throw Object.assign(new Error(`unsupported charset "${charset.slice(0, 32)}"`), { status: 415, type: 'charset.unsupported' });
      assertUtf8Body(raw);
    },
  });
  return (req, res, next) => {
    if (declaredBodyLength(req) > options.limit) {
      // The error body-parser raises for a body over its limit, so that each route maps it as before.
      next(Object.assign(new Error('request entity too large'), { status: 413, type: 'entity.too.large' }));
      return;
    }
    parse(req, res, next);
  };
}
