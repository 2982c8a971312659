import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { AppRoute } from '@ts-rest/core';
import { TsRestResponseError } from '@ts-rest/core';
import { accessOf } from '@affiliate-attribution/contract';
import type { AppRouteImplementation } from '@ts-rest/express';
import type { Logger } from 'pino';
import type { ZodTypeAny } from 'zod';
import { errorResponse, mustCloseForUnreadBody } from './error-handler.js';
import { BadRequestError } from './errors.js';
import { isPlainJsonBody, JSON_BODY_LIMIT_BYTES } from './json-body.js';
import { HeaderList, stagesOf, type HotStages, type PipelineRequest, type PipelineStep } from './pipeline.js';
import { describeZodError } from './validation-message.js';

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
export function hotRoute<T extends AppRoute>(
  route: T,
  implementation: AppRouteImplementation<T> | { handler: unknown },
): HotRoute {
  if (typeof implementation !== 'function')
    throw new Error(`${route.method} ${route.path}: a hot route takes a plain implementation, without middleware`);
  if (route.path.includes(':') || isZodSchema(route.query) || isZodSchema(route.headers)) {
    throw new Error(`${route.method} ${route.path}: a hot route has no path parameters, query or header schema`);
  }
  // The access rule (a member's session, a test key: modules/people/route-access.ts) runs in
  // Express, as ts-rest's globalMiddleware: a route that has one is never served here.
  if (accessOf(route))
    throw new Error(
      `${route.method} ${route.path}: a route with an access rule (owner-only, no test key) is not a hot route`,
    );
  if (route.method !== 'GET' && !isZodSchema((route as { body?: unknown }).body)) {
    throw new Error(`${route.method} ${route.path}: a hot route's body is a zod schema`);
  }
  return { route, implementation: implementation as unknown as LooseImplementation };
}

const isZodSchema = (value: unknown): boolean =>
  typeof (value as { safeParse?: unknown } | undefined)?.safeParse === 'function';

export interface HotLaneDeps {
  routes: HotRoute[];
  /** The request pipeline (stages.ts), the same list Express mounts. */
  pipeline: readonly PipelineStep[];
  logger: Logger;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

interface CompiledRoute {
  route: AppRoute;
  body: ZodTypeAny | undefined;
  implementation: LooseImplementation;
  stages: HotStages;
}

/**
 * The hot lane: the busiest merchant endpoints (clicks, customers, conversions, /api/me) served
 * straight on node:http, ahead of Express, so that routing and middleware layers cost them
 * nothing. It serves a request only in the plain form integrations send (exact path, no query
 * string, a GET without a body or a UTF-8 JSON body with Content-Length under the limit, no
 * content encoding: see isPlainJsonBody); anything else goes to Express untouched, which answers
 * it as it answers every route.
 *
 * It answers exactly as the Express stack does (test/api/hot-lane.test.ts compares the two
 * response by response): it runs the same stages in the same order (stages.ts: request id,
 * security headers, API key, rate limit, JSON body, NUL characters, ...), then the contract
 * validation of the body and the route's implementation, with the same error mapping
 * (errorResponse). Nothing of the body is read before the key is known: a refused request's body
 * is never buffered, and the answer closes the connection while a large body is still arriving
 * (mustCloseForUnreadBody).
 */
export class HotLane {
  private readonly routes = new Map<string, CompiledRoute>();

  constructor(private readonly deps: HotLaneDeps) {
    for (const { route, implementation } of deps.routes) {
      const body = route.method === 'GET' ? undefined : (route as { body: ZodTypeAny }).body;
      this.routes.set(`${route.method} ${route.path}`, {
        route,
        body,
        implementation,
        stages: stagesOf(deps.pipeline, route),
      });
    }
  }

  /** The stages the hot lane runs for a route (`GET /api/me`), by name, in order. */
  stageNames(methodAndPath: string): string[] | undefined {
    return this.routes.get(methodAndPath)?.stages.names;
  }

  /** Serves the request if it is a hot route in the plain form; false: Express should answer it. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const hot = this.routes.get(`${req.method} ${req.url}`);
    if (!hot || !isPlainRequest(req)) return false;
    this.serve(hot, req as PipelineRequest, res).catch((err: unknown) => {
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

  private async serve(hot: CompiledRoute, req: PipelineRequest, res: ServerResponse): Promise<void> {
    const headers = new HeaderList();
    req.routePattern = hot.route.path;
    let status: number;
    let body: unknown;
    try {
      const { run } = hot.stages;
      for (let i = 0; i < run.length; i++) {
        const pending = run[i](req, res, headers);
        if (pending !== undefined) await pending;
      }
      const valid = hot.body === undefined ? { success: true as const, data: {} } : hot.body.safeParse(req.body);
      if (!valid.success) throw new BadRequestError(describeZodError(valid.error, 'body'));
      try {
        ({ status, body } = await hot.implementation({
          params: {},
          query: {},
          headers: req.headers,
          body: valid.data,
          req,
          res,
        }));
      } catch (err) {
        if (!(err instanceof TsRestResponseError)) throw err;
        ({ statusCode: status, body } = err as TsRestResponseError<AppRoute> as { statusCode: number; body: unknown });
      }
    } catch (err) {
      const error = errorResponse(err);
      if (error.log) this.deps.logger[error.log.level]({ err, reqId: req.requestId }, error.log.msg);
      if (req.socket.destroyed) return; // the client went away mid-request: nobody to answer
      for (const [name, value] of Object.entries(error.headers ?? {})) headers.setHeader(name, value);
      status = error.status;
      body = { success: false, message: error.message };
    }
    if (mustCloseForUnreadBody(req) && !headers.has('Connection')) headers.setHeader('Connection', 'close');
    const json = JSON.stringify(body);
    headers.setHeader('Content-Type', JSON_CONTENT_TYPE);
    headers.setHeader('Content-Length', String(Buffer.byteLength(json)));
    res.writeHead(status, headers.flat);
    res.end(json);
    for (const answered of hot.stages.answered) answered(req, status);
  }
}

/** The form the hot lane serves: an API-key request, a GET without a body or a plain-form JSON body (isPlainJsonBody). */
function isPlainRequest(req: IncomingMessage): boolean {
  // A dashboard session (a cookie and no Authorization header) goes to Express, whose pipeline
  // has the session stage: the hot lane serves the integrations' API keys, as it always did.
  if (req.headers.authorization === undefined && req.headers.cookie !== undefined) return false;
  if (req.method === 'GET')
    return req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined;
  return isPlainJsonBody(req, JSON_BODY_LIMIT_BYTES);
}
