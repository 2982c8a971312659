import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import helmet from 'helmet';
import { ErrorMessages } from '@affiliate-attribution/contract';
import { BadRequestError } from './errors.js';
import type { Stage } from './pipeline.js';
import { echoInput } from './validation-message.js';

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
const STRICT_SECURITY_HEADERS = helmetHeaders({
  ...commonPolicy,
  crossOriginResourcePolicy: { policy: 'same-origin' },
});
/** The snippet and /public/*: embeddable by merchants' pages on other origins. */
const EMBEDDABLE_SECURITY_HEADERS = helmetHeaders({
  ...commonPolicy,
  crossOriginResourcePolicy: { policy: 'cross-origin' },
});

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
    for (let i = 0; i < flat.length; i += 2) headers.setHeader(flat[i], flat[i + 1]);
  },
};

/**
 * A lone UTF-16 surrogate (U+D800 to U+DFFF without its other half): what `\ud800` in a JSON string
 * parses to. It is not Unicode text, and PostgreSQL (like every UTF-8 encoder) writes U+FFFD in its
 * place, so "sur\ud800" and "sur\udbff" would be stored as one and the same id. With the `u` flag
 * a regular expression reads a string by code points, and only an unpaired surrogate is one of Cs.
 */
const LONE_SURROGATE = /\p{Cs}/u;
export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);

/** Why a string of a request cannot be stored as it was sent, and where: the path of its field (or of the object whose key it is). */
export interface UnstorableText {
  kind: 'NUL' | 'lone surrogate';
  field: string[];
  inKey: boolean;
}

const textFault = (text: string): UnstorableText['kind'] | undefined =>
  text.includes('\u0000') ? 'NUL' : hasLoneSurrogate(text) ? 'lone surrogate' : undefined;

/**
 * The first string (a value or an object key, at any depth) of a parsed request that PostgreSQL
 * cannot store as sent, or undefined. Every request with a body is walked, so nothing is allocated
 * unless a fault is found: the path is put together on the way back up.
 */
export function findUnstorableText(value: unknown, depth = 0): UnstorableText | undefined {
  if (typeof value === 'string') {
    const kind = textFault(value);
    return kind && { kind, field: [], inKey: false };
  }
  if (depth > 64 || value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], depth + 1);
      if (found) {
        found.field.unshift(String(i));
        return found;
      }
    }
    return undefined;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const kind = textFault(key);
    if (kind) return { kind, field: [], inKey: true };
    const found = findUnstorableText((value as Record<string, unknown>)[key], depth + 1);
    if (found) {
      found.field.unshift(key);
      return found;
    }
  }
  return undefined;
}

/** The 400 message: NUL's fixed one; for a lone surrogate, the field named as validation messages name it ("items.0.external_id"). */
export function unstorableTextMessage(found: UnstorableText): string {
  if (found.kind === 'NUL') return ErrorMessages.nulCharacters;
  const name = found.field.length > 0 ? found.field.map((segment) => echoInput(segment)).join('.') : 'body';
  return found.inKey ? `${name}: a key with ${ErrorMessages.loneSurrogate}` : `${name}: ${ErrorMessages.loneSurrogate}`;
}

/**
 * PostgreSQL text cannot store U+0000, and a query carrying one fails in the driver; it stores a
 * lone surrogate as U+FFFD, merging distinct ids. Such input is refused up front with 400 (path,
 * query string and parsed JSON body), never sent to the database. A request in the hot lane's
 * plain form is its route's path exactly, without a query string: only a body can hold one there.
 * (A path or query string cannot carry a lone surrogate: its %-escapes must decode as UTF-8.)
 */
export const unstorableTextStage: Stage = {
  name: 'unstorable text',
  needed: (route) => route.method !== 'GET',
  run(req) {
    if ((req.originalUrl ?? req.url ?? '').includes('%00')) throw new BadRequestError(ErrorMessages.nulCharacters);
    const found = findUnstorableText((req as { query?: unknown }).query) ?? findUnstorableText(req.body);
    if (found) throw new BadRequestError(unstorableTextMessage(found));
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
      if (charset !== 'utf-8')
        throw Object.assign(new Error(`unsupported charset "${charset.slice(0, 32)}"`), {
          status: 415,
          type: 'charset.unsupported',
        });
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
