import type { Logger } from 'pino';
import { adminTokenStage, apiKeyStage, type ApiKeyAuthenticator } from './authentication.js';
import { drainingStage, type Readiness } from './health.js';
import { JSON_BODY_LIMIT_BYTES, jsonBodyStage } from './json-body.js';
import { accessLogStage } from './logging.js';
import type { Metrics } from './metrics.js';
import type { PipelineStep, Stage } from './pipeline.js';
import { API_KEY_RATE_LIMIT_SCOPE, rateLimitStage, type RateLimiter } from './rate-limit.js';
import { requestIdStage } from './request-context.js';
import { unstorableTextStage, securityHeadersStage } from './security.js';

export interface PipelineDeps {
  authenticator: ApiKeyAuthenticator;
  apiKeyRateLimiter: RateLimiter;
  adminToken: string | undefined;
  metrics: Metrics;
  readiness: Readiness;
  logger: Logger;
  /** The dashboard's session credential (modules/people/session.ts), tried before the API key. */
  session?: Stage;
  /** The route groups' own stages outside /api (app.ts gathers them from their modules). */
  groups?: RouteGroupStages;
}

/**
 * What a route group outside /api adds to the list, each stage declaring its paths: the public
 * tracking endpoints (/public: modules/tracking), provider webhooks (/webhooks), the dashboard's
 * sign-in (/auth: modules/people) and the partner portal's API (/partner/api: modules/partners).
 */
export interface RouteGroupStages {
  /** From the headers alone, before any body is read: CORS, the group's session or cross-site check, its rate limits. */
  fromHeaders: readonly Stage[];
  /** Body parsers for the groups' own forms (JSON in text/plain on /public); each parses only its paths. */
  bodies: readonly Stage[];
  /** After the body rules (a malformed request is told what is wrong with it first). */
  afterBody: readonly Stage[];
  /** Routes whose JSON body may be larger than JSON_BODY_LIMIT_BYTES (a tax form upload), by method and exact path. */
  jsonBodyLimits?: readonly { method: string; path: string; bytes: number }[];
}

/** Where the API's JSON body rules apply besides /api and /admin. Not /webhooks: signatures are over the raw bytes, which the webhook route reads. */
const JSON_BODY_PATHS = ['/api', '/admin', '/partner/api', '/auth/invitations'];

/**
 * Every request's way to its route, in order: the one list both lanes run (http/pipeline.ts), and
 * every route group goes through (/api, /admin, /public, /webhooks, /auth, /partner/api).
 * Express mounts it whole (app.ts); the hot lane (hot-routes.ts) runs, for each of its routes,
 * the stages under the route's path that a plain-form request needs. A new credential, header or
 * check is added here, once, and both lanes have it; test/api/hot-lane.test.ts holds their answers
 * equal. After the list: contract validation, the route, and the one error mapping (error-handler.ts).
 *
 * The order is a security decision: credentials and the rate limit come from the headers alone,
 * before a byte of the body is read, so that a refused request's body is never buffered.
 */
export function requestPipeline(deps: PipelineDeps): PipelineStep[] {
  return [
    requestIdStage,
    deps.metrics.stage(),
    securityHeadersStage,
    drainingStage(deps.readiness),
    // /health, /ready, /metrics: no key, no database context, no access-log line.
    { slot: 'operational endpoints', paths: ['/health', '/ready', '/metrics'] },
    accessLogStage(deps.logger),
    // Static answers: the snippet, the documentation, the dashboard and the partner portal's pages.
    { slot: 'static surface', paths: ['/snippet.js', '/docs', '/openapi.json', '/dashboard', '/portal'] },
    // The route groups' checks from the headers: /public's CORS, visitor address and per-visitor
    // limits, /webhooks' outcome for the metrics, /auth's cross-site refusal and sign-in limit,
    // /partner/api's session and limits.
    ...(deps.groups?.fromHeaders ?? []),
    // A dashboard session (no Authorization header, a session cookie); the API key stage leaves its requests alone.
    ...(deps.session ? [deps.session] : []),
    apiKeyStage(deps.authenticator),
    // Per API key (or per dashboard user), after authentication: an invalid key never consumes a real key's budget.
    rateLimitStage(deps.apiKeyRateLimiter, {
      scope: API_KEY_RATE_LIMIT_SCOPE,
      key: (req) => req.apiKeyHash ?? (req.user ? `user:${req.user.id}` : 'none'),
      paths: ['/api'],
    }),
    adminTokenStage(deps.adminToken),
    ...(deps.groups?.bodies ?? []),
    jsonBodyStage(JSON_BODY_LIMIT_BYTES, JSON_BODY_PATHS, deps.groups?.jsonBodyLimits),
    // Every route's path, query and parsed body (a webhook's raw body is its route's to read).
    unstorableTextStage,
    ...(deps.groups?.afterBody ?? []),
  ];
}
