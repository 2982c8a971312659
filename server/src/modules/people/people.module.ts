import type { Express } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { contract } from '@affiliate-attribution/contract';
import { createExpressEndpoints } from '@ts-rest/express';
import { toNodeHandler } from 'better-auth/node';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { kyselyOf } from '../../db/database.js';
import type { ApiKeyAuthenticator } from '../../http/authentication.js';
import type { Stage } from '../../http/pipeline.js';
import type { EndpointOptions } from '../../http/router-types.js';
import { rateLimitStage, type RateLimiter } from '../../http/rate-limit.js';
import type { OrganizationsService } from '../organizations/organizations.service.js';
import { AUTH_BASE_PATH, authSecret, createAuth, type Auth } from './auth.js';
import { LogMailer, type Mailer } from './mailer.js';
import { PeopleRepository } from './people.repository.js';
import { accountRouter, operatorPeopleRouter, peopleRouter } from './people.router.js';
import { PeopleService } from './people.service.js';
import { sameOrigin, sessionStage, type SessionOrganizations } from './session.js';
import { ForbiddenError } from '../../http/errors.js';

/** Where sign-in attempts are counted, per client address: every way to try a password or a token. */
export const SIGN_IN_PATHS = [
  `${AUTH_BASE_PATH}/sign-in`,
  `${AUTH_BASE_PATH}/request-password-reset`,
  `${AUTH_BASE_PATH}/reset-password`,
  `${AUTH_BASE_PATH}/invitations`,
];

export interface PeopleConfig {
  ADMIN_TOKEN?: string;
  AUTH_SECRET?: string;
  /** The base of every link handed out (app.ts: required, never the request's Host). */
  PUBLIC_BASE_URL: string;
}

/**
 * People (spec/ledger.md, "People"): the dashboard's users, sessions and invitations, wired in
 * three places of app.ts: the session credential in the request pipeline (`stage`, before the API
 * key's), /auth's own stages in the same list (`publicStages`), better-auth and invitation
 * acceptance under /auth (`mountPublic`), and the people routes of the contract (`mountRoutes`).
 */
export class People {
  readonly auth: Auth;
  readonly service: PeopleService;
  readonly stage: Stage;
  /** The module's repository, also what the partner portal reads the organization's name from. */
  readonly repository: PeopleRepository;

  constructor(
    orm: MikroORM,
    organizations: SessionOrganizations,
    private readonly config: PeopleConfig,
    logger: Logger,
    mailer: Mailer = new LogMailer(logger),
  ) {
    this.repository = new PeopleRepository(orm);
    this.service = new PeopleService(this.repository, mailer);
    // Lazily: kyselyOf needs the ORM connected (tests create apps before using them, never before connecting).
    this.auth = createAuth({
      kysely: kyselyOf(orm) as unknown as Kysely<never>,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      secret: authSecret(config, logger),
      mailer,
      logger,
    });
    this.stage = sessionStage({
      auth: this.auth,
      people: this.repository,
      organizations,
      publicBaseUrl: config.PUBLIC_BASE_URL,
    });
  }

  /**
   * /auth's stages, from the headers, in the one request pipeline (http/stages.ts): the cross-site
   * refusal and the sign-in limit per address. The API's JSON body and text rules apply to
   * /auth/invitations from the same list; better-auth reads its own bodies.
   */
  publicStages(signInLimiter: RateLimiter): Stage[] {
    // Every state-changing /auth request comes from the dashboard's own pages: sign-in (login
    // CSRF), sign-out and the rest. better-auth checks the origin of some of them; this is all.
    const publicOrigin = new URL(this.config.PUBLIC_BASE_URL).origin;
    return [
      {
        name: 'auth same origin',
        paths: [AUTH_BASE_PATH],
        // Accepting an invitation is exempt: it carries no ambient credential (the token is in the
        // body) and signs nobody in.
        express: (req, _res, next) => {
          const exempt = req.method === 'GET' || req.method === 'HEAD' || req.path.startsWith('/invitations/');
          next(
            exempt || sameOrigin(req.headers, publicOrigin)
              ? undefined
              : new ForbiddenError('Cross-site request refused'),
          );
        },
      },
      rateLimitStage(signInLimiter, { scope: 'sign-in', paths: SIGN_IN_PATHS }),
    ];
  }

  /** /auth's routes: sign-in, sign-out, sessions, password reset (better-auth), and accepting invitations. */
  mountPublic(app: Express, options: EndpointOptions): void {
    createExpressEndpoints(contract.account, accountRouter(this.service), app, options);
    app.all(`${AUTH_BASE_PATH}/*`, toNodeHandler(this.auth));
  }

  mountRoutes(
    app: Express,
    deps: { organizations: OrganizationsService; authenticator: ApiKeyAuthenticator },
    options: EndpointOptions,
  ): void {
    createExpressEndpoints(
      contract.people,
      peopleRouter({ people: this.service, ...deps, publicBaseUrl: this.config.PUBLIC_BASE_URL }),
      app,
      options,
    );
    createExpressEndpoints(
      contract.adminPeople,
      operatorPeopleRouter(this.service, this.config.PUBLIC_BASE_URL),
      app,
      options,
    );
  }
}
