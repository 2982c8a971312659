import { randomUUID } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { RequestContext } from '@mikro-orm/core';
import { createExpressEndpoints, type RequestValidationError } from '@ts-rest/express';
import { contract } from '@affiliate-attribution/contract';
import pino, { type Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { Config } from './config.js';
import { ApiKeyAuthenticator, adminAuthentication } from './http/authentication.js';
import { errorHandler, notFoundHandler, sendError } from './http/error-handler.js';
import { BadRequestError } from './http/errors.js';
import { describeZodError } from './http/validation-message.js';
import './http/request-context.js';
import { OrganizationsService } from './modules/organizations/organizations.service.js';
import { ProgramsService } from './modules/programs/programs.service.js';
import { AffiliatesService } from './modules/affiliates/affiliates.service.js';
import { ClicksService } from './modules/clicks/clicks.service.js';
import { CustomersService } from './modules/customers/customers.service.js';
import { ConversionsService } from './modules/conversions/conversions.service.js';
import { meRouter } from './modules/me/me.router.js';
import { programsRouter } from './modules/programs/programs.router.js';
import { affiliatesRouter } from './modules/affiliates/affiliates.router.js';
import { clicksRouter } from './modules/clicks/clicks.router.js';
import { customersRouter } from './modules/customers/customers.router.js';
import { conversionsRouter } from './modules/conversions/conversions.router.js';
import { adminRouter } from './modules/admin/admin.router.js';

export interface AppDeps {
  orm: MikroORM;
  config: Pick<Config, 'ADMIN_TOKEN' | 'API_KEY_CACHE_TTL_MS'>;
  logger?: Logger;
}

export interface Services {
  organizations: OrganizationsService;
  programs: ProgramsService;
  affiliates: AffiliatesService;
  clicks: ClicksService;
  customers: CustomersService;
  conversions: ConversionsService;
  authenticator: ApiKeyAuthenticator;
}

export function createServices(orm: MikroORM, apiKeyCacheTtlMs: number): Services {
  const organizations = new OrganizationsService(orm);
  return {
    organizations,
    programs: new ProgramsService(orm),
    affiliates: new AffiliatesService(orm),
    clicks: new ClicksService(orm),
    customers: new CustomersService(orm),
    conversions: new ConversionsService(orm),
    authenticator: new ApiKeyAuthenticator(organizations, apiKeyCacheTtlMs),
  };
}

export const JSON_BODY_LIMIT = '1mb';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

const requestId: RequestHandler = (req, res, next) => {
  const incoming = req.headers['x-request-id'];
  req.requestId = typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', req.requestId);
  next();
};

/** A body that is not JSON where JSON is expected: 415 rather than a confusing validation error. */
const requireJsonBody: RequestHandler = (req, res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && ['POST', 'PUT', 'PATCH'].includes(req.method) && !req.is(['application/json', 'application/*+json'])) {
    sendError(res, 415, 'Content-Type must be application/json');
    return;
  }
  next();
};

function validationErrorHandler(err: RequestValidationError): never {
  const [where, zodError] = (
    [
      ['path', err.pathParams],
      ['query', err.query],
      ['headers', err.headers],
      ['body', err.body],
    ] as const
  ).find(([, e]) => e !== null)!;
  throw new BadRequestError(describeZodError(zodError!, where));
}

export function createApp(deps: AppDeps): { app: Express; services: Services } {
  const logger = deps.logger ?? pino({ level: 'silent' });
  const services = createServices(deps.orm, deps.config.API_KEY_CACHE_TTL_MS);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  app.use(
    pinoHttp({
      logger,
      genReqId: (req) => (req as express.Request).requestId,
      redact: ['req.headers.authorization', 'req.headers.cookie'],
    }),
  );
  app.use((_req, _res, next) => RequestContext.create(deps.orm.em, next));

  app.use(['/api', '/admin'], requireJsonBody, express.json({ limit: JSON_BODY_LIMIT }));
  app.use('/api', services.authenticator.middleware());
  app.use('/admin', adminAuthentication(deps.config.ADMIN_TOKEN));

  const options = { requestValidationErrorHandler: validationErrorHandler, logInitialization: false } as const;
  createExpressEndpoints(contract.me, meRouter, app, options);
  createExpressEndpoints(contract.programs, programsRouter(services.programs), app, options);
  createExpressEndpoints(contract.affiliates, affiliatesRouter(services.affiliates), app, options);
  createExpressEndpoints(contract.clicks, clicksRouter(services.clicks), app, options);
  createExpressEndpoints(contract.customers, customersRouter(services.customers), app, options);
  createExpressEndpoints(contract.conversions, conversionsRouter(services.conversions), app, options);
  createExpressEndpoints(contract.admin, adminRouter(services.organizations, services.authenticator), app, options);

  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return { app, services };
}
