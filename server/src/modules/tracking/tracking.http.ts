import type { Request, RequestHandler } from 'express';
import { contract } from '@affiliate-attribution/contract';
import { HttpError } from '../../http/errors.js';
import type { ApiKeyAuthenticator } from '../../http/authentication.js';
import type { Stage } from '../../http/pipeline.js';
import { clientAddressKey, rateLimitStage, type RateLimiter } from '../../http/rate-limit.js';
import { jsonBodyParser } from '../../http/security.js';
import { forwardedVisitorAddress, visitorAddressOf } from './forwarded-visitor.js';

/** Everything under this prefix is public (no API key) and answers any origin. */
export const PUBLIC_PREFIX = '/public';

/** Snippet bodies are a few hundred bytes; anything near this is not the snippet. */
export const PUBLIC_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * CORS for any origin. No credentials: the snippet reads its cookie itself and sends the value in
 * the body, so the service never needs the browser's cookies, and `*` stays valid. Preflights
 * (sent when a caller uses Content-Type: application/json) are answered here and cached for two
 * hours, the most Chromium honours.
 */
const cors: RequestHandler = (req, res, next) => {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'Retry-After, RateLimit-Limit, RateLimit-Remaining, X-Request-Id');
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-Request-Id');
    res.setHeader('Access-Control-Max-Age', '7200');
    res.setHeader('Vary', 'Access-Control-Request-Headers');
    res.status(204).end();
    return;
  }
  next();
};

// Refuses a declared length over the limit before reading, and bodies that are not UTF-8 (400).
const parseJson = jsonBodyParser({
  limit: PUBLIC_BODY_LIMIT_BYTES,
  // text/plain is what the snippet sends: a CORS "simple" request, so no preflight round trip.
  type: ['application/json', 'application/*+json', 'text/plain'],
});

/** JSON (or JSON in text/plain) only, UTF-8 only; an oversized body is 413 naming this endpoint's limit. */
const body: RequestHandler = (req, res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is(['application/json', 'application/*+json', 'text/plain'])) {
    next(new HttpError(415, 'Content-Type must be application/json (or text/plain holding JSON)'));
    return;
  }
  parseJson(req, res, (err?: unknown) => {
    if ((err as { type?: string } | undefined)?.type === 'entity.too.large') {
      next(new HttpError(413, `Request body exceeds the ${PUBLIC_BODY_LIMIT_BYTES / 1024} KiB limit`));
      return;
    }
    next(err);
  });
};

/**
 * The public endpoints' stages, placed in the one request pipeline (http/stages.ts): CORS, the
 * forwarded visitor address of a first-party proxy (trusted only with the organization's key:
 * forwarded-visitor.ts) and per-visitor rate limiting (one budget per endpoint, so that a flood of
 * clicks from an address does not block its signups), from the headers; then their body form
 * (JSON, or JSON in text/plain, 16 KiB). The API's text rules (no NUL, no lone surrogate:
 * http/security.ts) follow in the list, as for every route. The API-key stage (on /api) never sees them.
 */
export function publicTrackingStages(
  limiter: RateLimiter,
  authenticator: ApiKeyAuthenticator,
): { fromHeaders: Stage[]; bodies: Stage[] } {
  // Through a first-party proxy every visitor arrives from the merchant's server: each counts on its own.
  const key = (req: object) => clientAddressKey(visitorAddressOf(req as Request));
  return {
    fromHeaders: [
      { name: 'CORS (public)', paths: [PUBLIC_PREFIX], express: cors },
      { name: 'forwarded visitor', paths: [PUBLIC_PREFIX], express: forwardedVisitorAddress(authenticator) },
      rateLimitStage(limiter, { scope: 'public-clicks', key, paths: [contract.tracking.createClick.path] }),
      rateLimitStage(limiter, { scope: 'public-customers', key, paths: [contract.tracking.createCustomer.path] }),
      rateLimitStage(limiter, { scope: 'public-link-params', key, paths: [contract.tracking.linkParams.path] }),
    ],
    bodies: [{ name: 'JSON body (public)', paths: [PUBLIC_PREFIX], express: body }],
  };
}
