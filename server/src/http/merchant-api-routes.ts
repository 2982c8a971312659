import type { Express } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createExpressEndpoints } from '@ts-rest/express';
import { contract } from '@affiliate-attribution/contract';
import type { EndpointOptions } from './router-types.js';
import type { Services } from '../services.js';
import { meRouter } from '../modules/me/me.router.js';
import { brandingRouter } from '../modules/branding/branding.router.js';
import { BrandingService } from '../modules/branding/branding.js';
import { programsRouter } from '../modules/programs/programs.router.js';
import { affiliatesRouter } from '../modules/affiliates/affiliates.router.js';
import { clicksRouter } from '../modules/clicks/clicks.router.js';
import { customersRouter } from '../modules/customers/customers.router.js';
import { conversionsRouter } from '../modules/conversions/conversions.router.js';
import { adminRouter } from '../modules/admin/admin.router.js';
import { dataRetentionRouter } from '../modules/organizations/data-retention.router.js';
import { linkParamsRouter } from '../modules/organizations/link-params.router.js';
import { testDataRouter } from '../modules/organizations/test-data.router.js';
import { integrationsRouter } from '../modules/integrations/integrations.router.js';
import { WebhookLog } from '../webhooks/webhook-log.js';
import { trackingRouter } from '../modules/tracking/tracking.router.js';
import { commissionsRouter } from '../modules/commissions/commissions.router.js';
import { couponsRouter } from '../modules/coupons/coupons.router.js';
import { exportsRouter } from '../modules/exports/exports.router.js';
import { payoutsRouter } from '../modules/payouts/payouts.router.js';
import { webhookEndpointsRouter } from '../modules/events/endpoints.router.js';
import { reportsRouter } from '../modules/reports/reports.router.js';

/**
 * The merchant API's route groups (one contract resource each: `/api/*`, `/admin/*` and the
 * tracking endpoints under `/public`), mounted on Express in this order by createApp (app.ts),
 * after the webhooks and the people's and partners' public routes and before the imports. Answers
 * the routes the hot lane (http/hot-routes.ts) serves ahead of Express with the same
 * implementations.
 */
export function mountMerchantApi(
  app: Express,
  orm: MikroORM,
  services: Services,
  publicBaseUrl: string,
  options: EndpointOptions,
) {
  const clicks = clicksRouter(services.clicks);
  const customers = customersRouter(services.customers);
  const conversions = conversionsRouter(services.conversions, services.charges);
  const me = meRouter(services.linkParams);
  createExpressEndpoints(contract.me, me, app, options);
  createExpressEndpoints(contract.branding, brandingRouter(new BrandingService(orm)), app, options);
  createExpressEndpoints(contract.programs, programsRouter(services.programs), app, options);
  createExpressEndpoints(contract.affiliates, affiliatesRouter(services.affiliates, publicBaseUrl), app, options);
  createExpressEndpoints(contract.clicks, clicks, app, options);
  createExpressEndpoints(contract.customers, customers, app, options);
  createExpressEndpoints(contract.conversions, conversions, app, options);
  createExpressEndpoints(
    contract.integrations,
    integrationsRouter(services.integrations, new WebhookLog(orm)),
    app,
    options,
  );
  createExpressEndpoints(contract.commissions, commissionsRouter(services.commissions), app, options);
  createExpressEndpoints(contract.coupons, couponsRouter(services.coupons), app, options);
  createExpressEndpoints(contract.exports, exportsRouter(orm), app, options);
  createExpressEndpoints(contract.payouts, payoutsRouter(services.payouts, services.payoutSender), app, options);
  createExpressEndpoints(contract.webhookEndpoints, webhookEndpointsRouter(services.webhookEndpoints), app, options);
  createExpressEndpoints(contract.reports, reportsRouter(services.reports), app, options);
  createExpressEndpoints(
    contract.admin,
    adminRouter(services.organizations, services.authenticator, services.caches.changed),
    app,
    options,
  );
  createExpressEndpoints(contract.dataRetention, dataRetentionRouter(services.organizations), app, options);
  createExpressEndpoints(contract.linkParams, linkParamsRouter(services.linkParams), app, options);
  createExpressEndpoints(contract.testData, testDataRouter(services.organizations), app, options);
  createExpressEndpoints(
    contract.tracking,
    trackingRouter(services.clicks, services.customers, services.organizations, services.linkParams),
    app,
    options,
  );
  return { me, clicks, customers, conversions };
}
