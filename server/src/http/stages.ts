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
}

/**
 * Every request's way to its route, in order: the one list both lanes run (http/pipeline.ts).
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
    // The snippet, the documentation, the snippet's /public endpoints (their own CORS, limits and
    // body rules) and provider webhooks (raw bodies, verified before anything is parsed).
    // The dashboard (/dashboard) and its sign-in (/auth) are public surface too, as is the partner
    // portal (/portal) and its API (/partner: its own session credential, modules/partners).
    { slot: 'public surface', paths: ['/snippet.js', '/docs', '/openapi.json', '/public', '/webhooks', '/auth', '/dashboard', '/portal', '/partner'] },
    // A dashboard session (no Authorization header, a session cookie); the API key stage leaves its requests alone.
    ...(deps.session ? [deps.session] : []),
    apiKeyStage(deps.authenticator),
    // Per API key (or per dashboard user), after authentication: an invalid key never consumes a real key's budget.
    rateLimitStage(deps.apiKeyRateLimiter, { scope: API_KEY_RATE_LIMIT_SCOPE, key: (req) => req.apiKeyHash ?? (req.user ? `user:${req.user.id}` : 'none'), paths: ['/api'] }),
    adminTokenStage(deps.adminToken),
    jsonBodyStage(JSON_BODY_LIMIT_BYTES),
    unstorableTextStage,
  ];
}
