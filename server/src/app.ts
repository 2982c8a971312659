import type { RequestListener } from 'node:http';
import express, { type Express } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createExpressEndpoints } from '@ts-rest/express';
import { contract } from '@affiliate-attribution/contract';
import pino, { type Logger } from 'pino';
import {
  API_RATE_LIMIT_DEFAULTS,
  PAYPAL_WEBHOOK_VERIFICATION_DEFAULTS,
  PUBLIC_RATE_LIMIT_DEFAULTS,
  type Config,
} from './config.js';
import { errorHandler, notFoundHandler } from './http/error-handler.js';
import { validationErrorHandler } from './http/validation-message.js';
import type { EndpointOptions } from './http/router-types.js';
import { docsRouter } from './http/docs.js';
import type { RateLimiter } from './http/rate-limit.js';
import { HotLane, hotRoute } from './http/hot-routes.js';
import { createRateLimiterFactory, type RateLimiterFactory } from './http/rate-limit-stores.js';
import { poolOf, replicaRoutingOf } from './db/database.js';
import { Db } from './db/sql.js';
import { sql } from 'kysely';
import { Metrics } from './http/metrics.js';
import { Readiness, healthHandler, readinessHandler } from './http/health.js';
import { mountPipeline, type PipelineStep } from './http/pipeline.js';
import { requestPipeline } from './http/stages.js';
import { CACHE_CHANGES_CHANNEL, ChangeListener } from './db/change-notifications.js';
import { WebhookDispatcher, webhooksRouter } from './webhooks/dispatcher.js';
import { publicTrackingStages } from './modules/tracking/tracking.http.js';
import { snippetHandler } from './snippet/serve.js';
import { payoutRailWebhooksRouter } from './webhooks/payout-rails.js';
import { payoutFailureMail } from './modules/payouts/failure-mail.js';
import { PartnerNotices, type PartnerNoticesOptions } from './modules/partners/partner-notices.js';
import { People } from './modules/people/people.module.js';
import { routeAccess } from './modules/people/route-access.js';
import { dashboardRouter } from './http/dashboard.js';
import { SIGN_IN_LINKS_PER_EMAIL_DEFAULTS, SIGN_IN_RATE_LIMIT_DEFAULTS } from './config.js';
import { createMailer, SmtpMailer, type Mailer } from './modules/people/mailer.js';
import { MailQueue, type MailRetry } from './modules/people/mail-queue.js';
import { SecretBox } from './security/secret-box.js';
import { Partners } from './modules/partners/partners.module.js';
import { TestEmails } from './modules/test-emails/test-emails.js';
import { mountTestEmails } from './modules/test-emails/test-emails.router.js';
import { createImports } from './modules/imports/imports.module.js';
import { importsRouter } from './modules/imports/imports.router.js';
import type { ImportRunner } from './modules/imports/import-runner.js';
import { createPartnerPayouts } from './modules/payout-settings/partner-payouts.module.js';
import { requirePublicBaseUrl } from './http/public-base-url.js';
import { mountMerchantApi } from './http/merchant-api-routes.js';

/**
 * How this instance learns that a cached program rule or API key changed on another instance:
 * - `{ listenUrl }`: LISTEN on a dedicated session connection to that URL
 *   (db/change-notifications.ts); createApp returns the listener, the caller starts and closes it
 *   (main.ts).
 * - `'this-instance-only'`: no listener. For the embedded database (it accepts one connection, so
 *   it serves one instance) and tests of one instance: this instance's own changes apply at once;
 *   another instance's would apply only after the caches' TTLs.
 */
export type CacheInvalidation = { listenUrl: string; connectTimeoutMs?: number } | 'this-instance-only';

export interface AppDeps {
  orm: MikroORM;
  /** PUBLIC_BASE_URL is required: every link the service hands out is built from it (config.ts derives it when unset). */
  config: Pick<Config, 'ADMIN_TOKEN' | 'API_KEY_CACHE_TTL_MS' | 'PUBLIC_BASE_URL'> &
    Partial<
      Pick<
        Config,
        | 'PROGRAM_RULE_CACHE_TTL_MS'
        | 'TRUST_PROXY'
        | 'PUBLIC_RATE_LIMIT_MAX'
        | 'PUBLIC_RATE_LIMIT_WINDOW_SECONDS'
        | 'LEGACY_BASE_URL'
      >
    > &
    Partial<Pick<Config, 'ENCRYPTION_KEY' | 'WEBHOOK_ALLOW_PRIVATE_URLS'>>;
  /** Limiter of the public snippet endpoints; default: in memory (per instance), sized by config. */
  publicRateLimiter?: RateLimiter;
  /** Where rate limits are counted (main.ts: Redis, else PostgreSQL, shared by every instance); default: in memory. */
  rateLimiters?: RateLimiterFactory;
  /** Limiter per API key on /api; default: from rateLimiters, sized by config. */
  apiKeyRateLimiter?: RateLimiter;
  /** PayPal verify-webhook-signature calls per organization and window, counted by rateLimiters; default PAYPAL_WEBHOOK_VERIFICATION_DEFAULTS. */
  paypalWebhookVerifications?: { max: number; windowSeconds: number };
  /** Shared with main.ts, which marks the instance as draining on SIGTERM. */
  readiness?: Readiness;
  metrics?: Metrics;
  logger?: Logger;
  /** Where the built web app is (dashboard and partner portal); default web/dist. Tests build their own. */
  webDist?: string;
  /** Default 'this-instance-only'; main.ts always chooses (embedded database or not). */
  cacheInvalidation?: CacheInvalidation;
  /** How queued e-mails are tried again (modules/people/mail-queue.ts); tests shorten the waits. */
  mailRetry?: Partial<MailRetry>;
  /** The partner notices' rounds (partners/partner-notices.ts); main.ts starts them. */
  partnerNotices?: PartnerNoticesOptions;
}

type OperationsConfig = Partial<
  Pick<
    Config,
    | 'API_RATE_LIMIT_MAX'
    | 'API_RATE_LIMIT_WINDOW_SECONDS'
    | 'METRICS_TOKEN'
    | 'AUTH_SECRET'
    | 'SIGN_IN_RATE_LIMIT_MAX'
    | 'SIGN_IN_RATE_LIMIT_WINDOW_SECONDS'
  > &
    Pick<Config, 'SIGN_IN_LINKS_PER_EMAIL_MAX' | 'SIGN_IN_LINKS_PER_EMAIL_WINDOW_SECONDS' | 'SMTP_URL' | 'MAIL_FROM'>
>;

export { createServices, type CacheTtls, type SecretSettings, type Services } from './services.js';
import { createServices, type Services } from './services.js';

export interface App {
  /** The Express application: every route. */
  app: Express;
  /** What the HTTP server runs: the hot lane first, then Express (hotLane.listener(app)). */
  listener: RequestListener;
  /** The busiest routes, served ahead of Express (http/hot-routes.ts). */
  hotLane: HotLane;
  /** The one request pipeline every route group goes through (http/stages.ts), as mounted. */
  pipeline: readonly PipelineStep[];
  services: Services;
  metrics: Metrics;
  readiness: Readiness;
  /** Set with `cacheInvalidation: { listenUrl }`: not yet started; the caller starts and closes it. */
  changeListener: ChangeListener | undefined;
  /** Runs imports (modules/imports); main.ts starts it at boot so unfinished imports resume, and stops it. */
  importRunner: ImportRunner;
  /** With SMTP_URL: the queue every e-mail goes through (modules/people/mail-queue.ts); main.ts starts it at boot and stops it. */
  mailQueue: MailQueue | undefined;
  /** Partners told of commissions earned and payouts sent (main.ts starts its rounds; tests run one). */
  partnerNotices: PartnerNotices;
}

export function createApp(deps: AppDeps): App {
  const logger = deps.logger ?? pino({ level: 'silent' });
  const config: AppDeps['config'] & OperationsConfig = deps.config;
  const publicBaseUrl = requirePublicBaseUrl(config.PUBLIC_BASE_URL);
  const services = createServices(
    deps.orm,
    {
      apiKeyCacheTtlMs: deps.config.API_KEY_CACHE_TTL_MS,
      programRuleCacheTtlMs: deps.config.PROGRAM_RULE_CACHE_TTL_MS,
      logger,
    },
    { encryptionKey: deps.config.ENCRYPTION_KEY, allowPrivateWebhookUrls: deps.config.WEBHOOK_ALLOW_PRIVATE_URLS },
  );
  const cacheInvalidation = deps.cacheInvalidation ?? 'this-instance-only';
  const changeListener =
    cacheInvalidation === 'this-instance-only'
      ? undefined
      : new ChangeListener({
          connectionString: cacheInvalidation.listenUrl,
          connectTimeoutMs: cacheInvalidation.connectTimeoutMs,
          handler: services.caches,
          logger,
          // From the pool every write uses, so a probe travels the way a change does.
          sendProbe: async (payload) => {
            await Db.of(deps.orm).rows(sql`select pg_notify(${CACHE_CHANGES_CHANNEL}, ${payload})`);
          },
        });
  const metrics = deps.metrics ?? new Metrics();
  const replicas = replicaRoutingOf(deps.orm);
  if (replicas) metrics.watchReplicas(replicas);
  metrics.watchOperations(poolOf(deps.orm), Db.of(deps.orm));
  const readiness = deps.readiness ?? new Readiness();
  const rateLimiters = deps.rateLimiters ?? createRateLimiterFactory({}, logger);
  const apiKeyRateLimiter =
    deps.apiKeyRateLimiter ??
    rateLimiters.create({
      prefix: 'svc:rl:api',
      limit: config.API_RATE_LIMIT_MAX ?? API_RATE_LIMIT_DEFAULTS.max,
      windowSeconds: config.API_RATE_LIMIT_WINDOW_SECONDS ?? API_RATE_LIMIT_DEFAULTS.windowSeconds,
    });
  // The dashboard's users and sessions: a second credential on the same /api routes.
  // With SMTP, every e-mail is queued (in the transaction of the row it is about where there is
  // one) and sent by the queue's worker, tried again while the mail server is down; without, it is
  // written to the log at once (nothing to retry).
  const transport = createMailer(config, logger);
  const mailQueue =
    transport instanceof SmtpMailer
      ? new MailQueue(deps.orm, transport, new SecretBox(deps.config.ENCRYPTION_KEY), logger, deps.mailRetry)
      : undefined;
  const mailer: Mailer = mailQueue ?? transport;
  const people = new People(
    deps.orm,
    services.organizations,
    { ...config, PUBLIC_BASE_URL: publicBaseUrl },
    logger,
    mailer,
  );
  // E-mails to partners go through the test-mode check: a test organization's are kept, never sent.
  const testEmails = new TestEmails(deps.orm, mailer, logger);
  // The partner portal: partners' sign-in and their own routes under /partner/api.
  // The partner's side of payouts: tax forms, payout method, Stripe Connect onboarding.
  const partnerPayouts = createPartnerPayouts(deps.orm, {
    encryptionKey: deps.config.ENCRYPTION_KEY,
    integrations: services.integrations,
    publicBaseUrl,
  });
  const partners = new Partners(deps.orm, {
    people: people.repository,
    affiliates: services.affiliates,
    partnerPayouts,
    mailer: testEmails,
    logger,
    publicBaseUrl,
  });
  // Partners told by e-mail of each commission earned and payout sent, after those commit (main.ts starts the rounds).
  const partnerNotices = new PartnerNotices(deps.orm, testEmails, logger, publicBaseUrl, deps.partnerNotices);
  // A payout its provider did not pay: the partner is told by e-mail too (the portal shows it).
  services.payoutSender.onFailed(
    payoutFailureMail(
      {
        affiliates: services.affiliates,
        programOf: (organizationId, programId) => partners.service.programOfMail(organizationId, programId),
        mailer: testEmails,
        logger,
      },
      publicBaseUrl,
    ),
  );
  const signInLimit = {
    limit: config.SIGN_IN_RATE_LIMIT_MAX ?? SIGN_IN_RATE_LIMIT_DEFAULTS.max,
    windowSeconds: config.SIGN_IN_RATE_LIMIT_WINDOW_SECONDS ?? SIGN_IN_RATE_LIMIT_DEFAULTS.windowSeconds,
  };
  const partnerLimiters = {
    signIn: rateLimiters.create({ prefix: 'svc:rl:partner-sign-in', ...signInLimit }),
    linksPerEmail: rateLimiters.create({
      prefix: 'svc:rl:partner-link-email',
      limit: config.SIGN_IN_LINKS_PER_EMAIL_MAX ?? SIGN_IN_LINKS_PER_EMAIL_DEFAULTS.max,
      windowSeconds: config.SIGN_IN_LINKS_PER_EMAIL_WINDOW_SECONDS ?? SIGN_IN_LINKS_PER_EMAIL_DEFAULTS.windowSeconds,
    }),
    slugChecks: rateLimiters.create({
      prefix: 'svc:rl:partner-slug',
      limit: deps.config.PUBLIC_RATE_LIMIT_MAX ?? PUBLIC_RATE_LIMIT_DEFAULTS.max,
      windowSeconds: deps.config.PUBLIC_RATE_LIMIT_WINDOW_SECONDS ?? PUBLIC_RATE_LIMIT_DEFAULTS.windowSeconds,
    }),
  };
  const publicTracking = publicTrackingStages(
    deps.publicRateLimiter ??
      rateLimiters.create({
        prefix: 'svc:rl:public',
        limit: deps.config.PUBLIC_RATE_LIMIT_MAX ?? PUBLIC_RATE_LIMIT_DEFAULTS.max,
        windowSeconds: deps.config.PUBLIC_RATE_LIMIT_WINDOW_SECONDS ?? PUBLIC_RATE_LIMIT_DEFAULTS.windowSeconds,
      }),
    services.authenticator,
  );
  const partnerStages = partners.stages(partnerLimiters);
  // Every route group goes through the one list (http/stages.ts); each group's own stages declare their paths.
  const pipeline = requestPipeline({
    authenticator: services.authenticator,
    apiKeyRateLimiter,
    adminToken: deps.config.ADMIN_TOKEN,
    metrics,
    readiness,
    logger,
    session: people.stage,
    groups: {
      fromHeaders: [
        ...publicTracking.fromHeaders,
        // Provider webhooks: the outcome each answer stands for, for the metrics. Their raw body is their route's to read (signatures are over the bytes).
        { name: 'webhook outcome', paths: ['/webhooks'], express: metrics.webhookOutcomes() },
        ...people.publicStages(rateLimiters.create({ prefix: 'svc:rl:sign-in', ...signInLimit })),
        ...partnerStages.fromHeaders,
      ],
      bodies: publicTracking.bodies,
      afterBody: partnerStages.afterBody,
      jsonBodyLimits: partnerPayouts.jsonBodyLimits,
    },
  });
  // Every router of the contract is mounted with these (people.module.ts and partners.module.ts
  // included): routeAccess checks the role against the route ts-rest matched, before its handler.
  const options: EndpointOptions = {
    requestValidationErrorHandler: validationErrorHandler,
    logInitialization: false,
    globalMiddleware: [routeAccess],
  };

  const app = express();
  app.disable('x-powered-by');
  // One spelling per route, the contract's (the one the OpenAPI document and the hot lane know):
  // `/API/Users` or `/api/users/` answer 404 instead of reaching a route by another way than the
  // one every path-prefixed step of the pipeline (stages.ts) and the tests see.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('etag', false);
  // Behind a load balancer, req.ip (rate limits, click records) must be the client's, not the proxy's.
  app.set('trust proxy', deps.config.TRUST_PROXY ?? false);
  mountPipeline(app, pipeline, {
    'operational endpoints': () => {
      app.get('/health', healthHandler);
      app.get('/ready', readinessHandler(deps.orm, readiness));
      app.get('/metrics', metrics.handler(config.METRICS_TOKEN));
    },
    'static surface': () => {
      // The tracking snippet, the documentation, the dashboard and the partner portal's pages.
      app.get('/snippet.js', snippetHandler());
      app.use(docsRouter({ PUBLIC_BASE_URL: publicBaseUrl, LEGACY_BASE_URL: deps.config.LEGACY_BASE_URL }));
      app.use(dashboardRouter(deps.webDist));
    },
  });

  // The route groups' routes, after the whole list like every route.
  // The payout rails' own webhooks (PayPal, Wise) ahead of the payment providers' route.
  const verifications = deps.paypalWebhookVerifications ?? PAYPAL_WEBHOOK_VERIFICATION_DEFAULTS;
  const paypalVerifications = {
    limiter: rateLimiters.create({
      prefix: 'svc:rl:paypal-verify',
      limit: verifications.max,
      windowSeconds: verifications.windowSeconds,
    }),
    limit: verifications.max,
    windowSeconds: verifications.windowSeconds,
  };
  app.use(
    '/webhooks',
    payoutRailWebhooksRouter({ sender: services.payoutSender, paypalVerifications, logger }, deps.orm),
  );
  app.use('/webhooks', webhooksRouter(new WebhookDispatcher({ orm: deps.orm, ...services })));
  people.mountPublic(app, options);
  partners.mountPublic(app, partnerLimiters, options);
  const { me, clicks, customers, conversions } = mountMerchantApi(app, deps.orm, services, publicBaseUrl, options);
  const imports = createImports(deps.orm, logger, {
    encryptionKey: deps.config.ENCRYPTION_KEY,
    onChange: services.caches.changed,
  });
  createExpressEndpoints(contract.imports, importsRouter(imports.service), app, options);
  partnerPayouts.mountRoutes(app, options);
  people.mountRoutes(app, services, options);
  partners.mountRoutes(app, options);
  mountTestEmails(app, testEmails, options);

  app.use(notFoundHandler);
  app.use(errorHandler(logger));

  // The busiest endpoints, with the same implementations and the same pipeline, served ahead of Express.
  const hotLane = new HotLane({
    routes: [
      hotRoute(contract.me.get, me.get),
      hotRoute(contract.clicks.create, clicks.create),
      hotRoute(contract.customers.create, customers.create),
      hotRoute(contract.conversions.create, conversions.create),
    ],
    pipeline,
    logger,
  });
  return {
    app,
    listener: hotLane.listener(app),
    hotLane,
    pipeline,
    services,
    metrics,
    readiness,
    changeListener,
    importRunner: imports.runner,
    mailQueue,
    partnerNotices,
  };
}
