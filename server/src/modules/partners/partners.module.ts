import { contract, PREVIEW_IS_FOR_TEST_PARTNERS } from '@affiliate-attribution/contract';
import { createExpressEndpoints } from '@ts-rest/express';
import type { Express } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { ForbiddenError, TooManyRequestsError } from '../../http/errors.js';
import type { Stage } from '../../http/pipeline.js';
import { clientAddressKey, rateLimitStage, type RateLimiter } from '../../http/rate-limit.js';
import { requireOrganization } from '../../http/request-context.js';
import { s, type EndpointOptions } from '../../http/router-types.js';
import type { AffiliatesService } from '../affiliates/affiliates.service.js';
import type { OrganizationMailer } from '../test-emails/test-emails.js';
import type { PartnerPayouts } from '../payout-settings/partner-payouts.module.js';
import {
  PARTNER_API,
  PartnerCookie,
  partnerSameOrigin,
  partnerSessionMiddleware,
  requirePartner,
} from './partner-session.js';
import type { PeopleRepository } from '../people/people.repository.js';
import { PartnersRepository } from './partners.repository.js';
import { normalizeEmail, PartnersService, SIGN_IN_LINK_MINUTES } from './partners.service.js';
import { PartnerFigures } from './partner-figures.js';

export interface PartnerLimiters {
  /** Per client address: applying, asking for a sign-in link, signing in (SIGN_IN_RATE_LIMIT_*). */
  signIn: RateLimiter;
  /** Per e-mail and organization: sign-in links asked for (SIGN_IN_LINKS_PER_EMAIL_*). */
  linksPerEmail: RateLimiter;
  /** Per client address: slug checks as an applicant types (PUBLIC_RATE_LIMIT_*). */
  slugChecks: RateLimiter;
}

/**
 * The partner portal (modules/partners): its stages in the one request pipeline (`stages`: the
 * partner's session, its rate limits, the cross-site check; the API's JSON body and text rules
 * apply to /partner/api from the same list, http/stages.ts), its public and partner-session routes
 * under /partner/api (`mountPublic`), and the merchant's invitation route under /api (`mountRoutes`).
 */
export class Partners {
  readonly service: PartnersService;
  /** What a signed-in partner sees of their own work (partner-figures.ts). */
  readonly figures: PartnerFigures;
  private readonly cookie: PartnerCookie;

  constructor(
    orm: MikroORM,
    /** publicBaseUrl: PUBLIC_BASE_URL, the base of the sign-in links e-mailed (never the request's Host). */
    private readonly deps: {
      affiliates: AffiliatesService;
      partnerPayouts: Pick<PartnerPayouts, 'taxForms' | 'payoutSettings'>;
      mailer: OrganizationMailer;
      logger: Logger;
      publicBaseUrl: string;
      /** The people module's repository: the organization's name. */
      people: Pick<PeopleRepository, 'organizationName'>;
    },
  ) {
    const repository = new PartnersRepository(orm, deps.people);
    this.service = new PartnersService(repository, deps.affiliates, deps.mailer, deps.logger);
    this.figures = new PartnerFigures(repository);
    this.figures.payoutHolds = (partner) =>
      deps.partnerPayouts.taxForms.holdsByProgram(partner.organizationId, partner.email);
    this.cookie = new PartnerCookie(deps.publicBaseUrl);
    deps.affiliates.statusListeners.push((change) =>
      this.service
        .applicationDecided(change)
        .catch((err: unknown) =>
          deps.logger.error(
            { err, affiliate_id: change.affiliate.id },
            'could not tell the partner of the decision on their application',
          ),
        ),
    );
  }

  /** /partner/api's stages, in the list's places: from the headers (session, limits), and after the body rules (cross-site refusal). */
  stages(limiters: Pick<PartnerLimiters, 'signIn' | 'slugChecks'>): { fromHeaders: Stage[]; afterBody: Stage[] } {
    const routes = contract.partnerPublic;
    const protectedPaths = new Set(Object.values(contract.partner).map((route) => route.path));
    return {
      fromHeaders: [
        {
          name: 'partner session',
          paths: [PARTNER_API],
          express: partnerSessionMiddleware({ partners: this.service, cookie: this.cookie, protectedPaths }),
        },
        {
          ...rateLimitStage(limiters.signIn, {
            scope: 'partner-sign-in',
            paths: [routes.apply.path, routes.requestSignInLink.path, routes.signIn.path],
          }),
          methods: ['POST'],
        },
        {
          ...rateLimitStage(limiters.slugChecks, { scope: 'partner-slug', paths: [routes.slugAvailability.path] }),
          methods: ['GET', 'HEAD'],
        },
      ],
      afterBody: [
        { name: 'partner same origin', paths: [PARTNER_API], express: partnerSameOrigin(this.deps.publicBaseUrl) },
      ],
    };
  }

  /** The routes under /partner/api: after the whole pipeline, as every route. */
  mountPublic(app: Express, limiters: Pick<PartnerLimiters, 'linksPerEmail'>, options: EndpointOptions): void {
    const routes = contract.partnerPublic;
    const perEmail = async (organizationId: string, email: string) => {
      let decision;
      try {
        decision = await limiters.linksPerEmail.hit(`partner-link-email:${organizationId}:${normalizeEmail(email)}`);
      } catch {
        return; // the limiter's own store failed: as every limit, it lets the request through (http/rate-limit.ts)
      }
      if (!decision.allowed) throw new TooManyRequestsError(decision.retryAfterSeconds);
    };

    createExpressEndpoints(
      routes,
      s.router(routes, {
        joinPage: async ({ params }) => ({
          status: 200,
          body: { success: true, data: await this.service.joinPage(params.organizationId, params.programId) },
        }),
        portalOrganization: async ({ params }) => ({
          status: 200,
          body: { success: true, data: await this.service.portalOrganization(params.organizationId) },
        }),
        slugAvailability: async ({ params }) => ({
          status: 200,
          body: {
            success: true,
            data: {
              slug: params.slug,
              available: await this.service.slugAvailable(params.organizationId, params.slug),
            },
          },
        }),
        apply: async ({ params, body }) => ({
          status: 201,
          body: {
            success: true,
            data: {
              application: await this.service.apply(
                params.organizationId,
                params.programId,
                body,
                this.deps.publicBaseUrl,
              ),
            },
          },
        }),
        requestSignInLink: async ({ params, body }) => {
          await perEmail(params.organizationId, body.email);
          await this.service.requestSignInLink(params.organizationId, body.email, this.deps.publicBaseUrl);
          return { status: 202, body: { success: true, data: { expires_in_seconds: SIGN_IN_LINK_MINUTES * 60 } } };
        },
        signIn: async ({ req, res, body }) => {
          const { token, session } = await this.service.signIn(body.organization_id, body.token, {
            ip: req.ip ? clientAddressKey(req.ip) : null,
            userAgent: req.get('user-agent') ?? null,
          });
          this.cookie.set(res, session, token);
          return { status: 200, body: { success: true, data: { partner: await this.service.me(session) } } };
        },
        session: async ({ req }) => ({
          status: 200,
          body: {
            success: true,
            data: { partner: req.partner ? await this.service.partnerOrNull(req.partner) : null },
          },
        }),
        signOut: async ({ req, res }) => {
          if (req.partner) await this.service.signOut(req.partner);
          this.cookie.clear(res);
          return { status: 200, body: { success: true, data: {} } };
        },
      }),
      app,
      options,
    );

    createExpressEndpoints(
      contract.partner,
      s.router(contract.partner, {
        me: async ({ req }) => ({
          status: 200,
          body: { success: true, data: { partner: await this.service.me(requirePartner(req)) } },
        }),
        updateMe: async ({ req, body }) => ({
          status: 200,
          body: {
            success: true,
            data: { partner: await this.service.updateMe(requirePartner(req), body) },
          },
        }),
        link: async ({ req, query }) => ({
          status: 200,
          body: {
            success: true,
            data: { url: await this.figures.link(requirePartner(req), query.program_id, query.url) },
          },
        }),
        stats: async ({ req, query }) => ({
          status: 200,
          body: { success: true, data: await this.figures.stats(requirePartner(req), query) },
        }),
        customers: async ({ req, query }) => ({
          status: 200,
          body: { success: true, data: await this.figures.customers(requirePartner(req), query) },
        }),
        commissions: async ({ req, query }) => ({
          status: 200,
          body: { success: true, data: await this.figures.commissions(requirePartner(req), query) },
        }),
        payouts: async ({ req, query }) => ({
          status: 200,
          body: { success: true, data: await this.figures.payouts(requirePartner(req), query) },
        }),
        taxForm: async ({ req }) => {
          const partner = requirePartner(req);
          return {
            status: 200,
            body: {
              success: true,
              data: await this.deps.partnerPayouts.taxForms.partnerView(partner.organizationId, partner.email),
            },
          };
        },
        submitTaxForm: async ({ req, body }) => {
          const partner = requirePartner(req);
          return {
            status: 201,
            body: {
              success: true,
              data: await this.deps.partnerPayouts.taxForms.submit(partner.organizationId, partner.email, body),
            },
          };
        },
        payoutSettings: async ({ req }) => {
          const partner = requirePartner(req);
          return {
            status: 200,
            body: {
              success: true,
              data: await this.deps.partnerPayouts.payoutSettings.partnerSettings(
                partner.organizationId,
                partner.email,
              ),
            },
          };
        },
        updatePayoutSettings: async ({ req, body }) => {
          const partner = requirePartner(req);
          return {
            status: 200,
            body: {
              success: true,
              data: await this.deps.partnerPayouts.payoutSettings.setPartnerMethod(
                partner.organizationId,
                partner.email,
                body,
              ),
            },
          };
        },
        stripeOnboarding: async ({ req }) => {
          const partner = requirePartner(req);
          return {
            status: 200,
            body: {
              success: true,
              data: await this.deps.partnerPayouts.payoutSettings.onboardPartner(partner.organizationId, partner.email),
            },
          };
        },
      }),
      app,
      options,
    );
  }

  /** The merchant's side: inviting one of its affiliates (POST /api/affiliates/{id}/invitation), previewing the portal as a test one. */
  mountRoutes(app: Express, options: EndpointOptions): void {
    createExpressEndpoints(
      contract.partnerInvitations,
      s.router(contract.partnerInvitations, {
        invite: async ({ req, params }) => {
          const organizationId = requireOrganization(req).id;
          const affiliate = await this.deps.affiliates.get(organizationId, params.id);
          return {
            status: 202,
            body: {
              success: true,
              data: await this.service.invite(organizationId, affiliate, this.deps.publicBaseUrl),
            },
          };
        },
      }),
      app,
      options,
    );

    createExpressEndpoints(
      contract.portalPreview,
      s.router(contract.portalPreview, {
        create: async ({ req, params }) => {
          const organization = requireOrganization(req);
          // The affiliate first: an id of the other mode is 404, as on every route (spec/test-mode.md).
          const affiliate = await this.deps.affiliates.get(organization.id, params.id);
          // A live affiliate (live mode: a live key, a session without X-Mode: test) is a real partner: never signed in as.
          if (organization.livemode !== false) throw new ForbiddenError(PREVIEW_IS_FOR_TEST_PARTNERS);
          return {
            status: 201,
            body: {
              success: true,
              data: await this.service.previewLink(organization.id, affiliate, this.deps.publicBaseUrl),
            },
          };
        },
      }),
      app,
      options,
    );
  }
}
