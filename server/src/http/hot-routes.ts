import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { AppRoute } from '@ts-rest/core';
import { TsRestResponseError } from '@ts-rest/core';
import type { AppRouteImplementation } from '@ts-rest/express';
import type { Logger } from 'pino';
import type { ZodTypeAny } from 'zod';
import type { Organization } from '@affiliate-attribution/contract';
import type { ApiKeyAuthenticator } from './authentication.js';
import { errorResponse, mustCloseForUnreadBody } from './error-handler.js';
import { BadRequestError } from './errors.js';
import type { Readiness } from './health.js';
import { bindRequestLog, logRequestCompleted } from './logging.js';
import type { Metrics } from './metrics.js';
import { API_KEY_RATE_LIMIT_SCOPE, countRequest, type RateLimiter } from './rate-limit.js';
import { requestIdFrom } from './request-context.js';
import { assertUtf8Body, containsNul, NUL_CHARACTERS_MESSAGE, STRICT_SECURITY_HEADERS } from './security.js';
import { describeZodError } from './validation-message.js';

/** Largest JSON body accepted on /api (body-parser's `1mb`: 1 MiB). */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

type LooseImplementation = (input: {
  params: Record<string, never>;
  query: Record<string, never>;
  headers: IncomingMessage['headers'];
  body: unknown;
  req: unknown;
  res: unknown;
}) => Promise<{ status: number; body: unknown }>;

export interface HotRoute {
  route: AppRoute;
  implementation: LooseImplementation;
}

/**
 * A contract route served by the hot lane, with the same implementation Express serves it with.
 * Only routes whose whole input is the JSON body qualify (no path parameters, query or header
 * schemas): the hot lane validates the body and nothing else.
 */
export function hotRoute<T extends AppRoute>(route: T, implementation: AppRouteImplementation<T> | { handler: unknown }): HotRoute {
  if (typeof implementation !== 'function') throw new Error(`${route.method} ${route.path}: a hot route takes a plain implementation, without middleware`);
  if (route.path.includes(':') || isZodSchema(route.query) || isZodSchema(route.headers)) {
    throw new Error(`${route.method} ${route.path}: a hot route has no path parameters, query or header schema`);
  }
  if (route.method !== 'GET' && !isZodSchema((route as { body?: unknown }).body)) {
    throw new Error(`${route.method} ${route.path}: a hot route's body is a zod schema`);
  }
  return { route, implementation: implementation as unknown as LooseImplementation };
}

const isZodSchema = (value: unknown): boolean => typeof (value as { safeParse?: unknown } | undefined)?.safeParse === 'function';

export interface HotLaneDeps {
  routes: HotRoute[];
  authenticator: ApiKeyAuthenticator;
  apiKeyRateLimiter: RateLimiter;
  metrics: Metrics;
  readiness: Readiness;
  logger: Logger;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const UTF8_JSON = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const SECURITY_HEADERS_FLAT = STRICT_SECURITY_HEADERS.flat();

/**
 * The hot lane: the busiest merchant endpoints (clicks, customers, conversions, /api/me) served
 * straight on node:http, ahead of Express, so that routing and middleware layers cost them
 * nothing. It serves a request only in the plain form integrations send (exact path, no query
 * string, a JSON body with Content-Length under the limit, no content encoding); anything else
 * goes to Express untouched, which answers it as it answers every route.
 *
 * It answers exactly as the Express stack does (test/api/hot-lane.test.ts compares the two
 * response by response): the same steps in the same order (API key, from the Authorization
 * header; per-key rate limit; then the body read and parsed: UTF-8, JSON; NUL characters;
 * contract validation; the route's implementation), the same error mapping (errorResponse),
 * security headers, request id, access log and metrics. Nothing of the body is read before the
 * key is known: a refused request's body is never buffered, and the answer closes the connection
 * while a large body is still arriving (mustCloseForUnreadBody). Bodies it leaves to Express (over the limit, other types) go
 * through the same order there: API key, rate limit, then 415 and a declared length over the
 * limit (413) before a byte is read.
 */
export class HotLane {
  private readonly routes = new Map<string, HotRoute>();

  constructor(private readonly deps: HotLaneDeps) {
    for (const hot of deps.routes) this.routes.set(`${hot.route.method} ${hot.route.path}`, hot);
  }

  /** Serves the request if it is a hot route in the plain form; false: Express should answer it. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const hot = this.routes.get(`${req.method} ${req.url}`);
    if (!hot || !isPlainRequest(req)) return false;
    this.serve(hot, req, res).catch((err: unknown) => {
      // Only writing the response can fail here (every other error is answered): cut the connection.
      this.deps.logger.error({ err }, 'hot lane failed to answer');
      res.destroy();
    });
    return true;
  }

  /** The server's request listener: the hot lane first, Express for everything else. */
  listener(express: RequestListener): RequestListener {
    return (req, res) => {
      if (!this.handle(req, res)) express(req, res);
    };
  }

  private async serve(hot: HotRoute, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { authenticator, apiKeyRateLimiter, metrics, readiness, logger } = this.deps;
    const started = process.hrtime.bigint();
    const request = req as IncomingMessage & { requestId: string; organization?: Organization; log: Logger };
    request.requestId = requestIdFrom(req.headers['x-request-id']);
    bindRequestLog(request, logger);
    const headers: string[] = [...SECURITY_HEADERS_FLAT, 'X-Request-Id', request.requestId];
    if (readiness.draining) headers.push('Connection', 'close');

    let status: number;
    let body: unknown;
    try {
      // The key first, from the headers: a body is read only for a request that may be served.
      const { organization, keyHash } = await authenticator.authenticate(req.headers.authorization);
      request.organization = organization;
      const limit = await countRequest(apiKeyRateLimiter, `${API_KEY_RATE_LIMIT_SCOPE}:${keyHash}`, (err) => request.log.warn({ err }, 'rate limiter unavailable; request allowed'));
      for (const [name, value] of limit.headers) headers.push(name, value);
      if (limit.refusal) throw limit.refusal;
      const parsed = hot.route.method === 'GET' ? {} : parseJsonBody(await readBody(req));
      if (containsNul(parsed)) throw new BadRequestError(NUL_CHARACTERS_MESSAGE);
      const valid = hot.route.method === 'GET' ? { success: true as const, data: parsed } : (hot.route as { body: ZodTypeAny }).body.safeParse(parsed);
      if (!valid.success) throw new BadRequestError(describeZodError(valid.error, 'body'));
      try {
        ({ status, body } = await hot.implementation({ params: {}, query: {}, headers: req.headers, body: valid.data, req, res }));
      } catch (err) {
        if (!(err instanceof TsRestResponseError)) throw err;
        ({ statusCode: status, body } = err as TsRestResponseError<AppRoute>);
      }
    } catch (err) {
      const error = errorResponse(err);
      if (error.log) logger[error.log.level]({ err, reqId: request.requestId }, error.log.msg);
      if (req.socket.destroyed) return; // the client went away mid-request: nobody to answer
      for (const [name, value] of Object.entries(error.headers ?? {})) headers.push(name, value);
      status = error.status;
      body = { success: false, message: error.message };
    }
    if (!readiness.draining && mustCloseForUnreadBody(req)) headers.push('Connection', 'close');
    const json = JSON.stringify(body);
    headers.push('Content-Type', JSON_CONTENT_TYPE, 'Content-Length', String(Buffer.byteLength(json)));
    res.writeHead(status, headers);
    res.end(json);
    metrics.record(req.method!, hot.route.path, status, hot.route.path, started);
    logRequestCompleted(logger, request, req.url!, status, started);
  }
}

/**
 * The form the hot lane serves: a GET without a body, or a POST whose body has a
 * Content-Length within the limit, no Content-Encoding and, when not empty, a UTF-8 JSON
 * Content-Type. The rest (chunked or compressed bodies, other content types: 415, too large:
 * 413) Express answers.
 */
function isPlainRequest(req: IncomingMessage): boolean {
  const { headers } = req;
  if (headers['transfer-encoding'] !== undefined) return false;
  const lengthHeader = headers['content-length'];
  const length = lengthHeader === undefined ? 0 : /^\d{1,10}$/.test(lengthHeader) ? Number(lengthHeader) : Number.NaN;
  if (req.method === 'GET') return length === 0 && lengthHeader === undefined;
  if (!(length <= JSON_BODY_LIMIT_BYTES)) return false;
  if (headers['content-encoding'] !== undefined && headers['content-encoding'].toLowerCase() !== 'identity') return false;
  return length === 0 || UTF8_JSON.test(headers['content-type'] ?? '');
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    req.once('end', () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
    req.once('error', reject);
    req.once('close', () => {
      if (!ended) reject(Object.assign(new Error('request aborted'), { type: 'request.aborted' }));
    });
  });
}

/**
 * JSON as body-parser's strict parser reads it (with the `verify` of security.ts's jsonBodyParser):
 * bytes that are not UTF-8 refused as 400, a leading BOM dropped, an empty body is `{}`, anything
 * but an object or array (after whitespace) refused, like malformed JSON, as 400.
 */
function parseJsonBody(raw: Buffer): unknown {
  assertUtf8Body(raw);
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return {};
  const first = /^[\x20\x09\x0a\x0d]*(.)/.exec(text)?.[1];
  try {
    if (first !== '{' && first !== '[') throw new SyntaxError('not a JSON object or array');
    return JSON.parse(text);
  } catch (err) {
    throw Object.assign(err as Error, { type: 'entity.parse.failed' });
  }
}
