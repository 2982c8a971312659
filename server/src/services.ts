/**
 * The domain services of one instance, built once and shared by every route group, the hot lane
 * and the background work (app.ts wires them to HTTP; main.ts starts the background parts).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import pino, { type Logger } from 'pino';
import { ApiKeyAuthenticator } from './http/authentication.js';
import { AttributionResolver } from './modules/referrals/attribution-resolver.js';
import { AttributionCache } from './attribution/cache.js';
import { type CacheChangeHandler } from './db/change-notifications.js';
import { OrganizationsService } from './modules/organizations/organizations.service.js';
import { OrganizationsRepository } from './modules/organizations/organizations.repository.js';
import { LinkParamsService } from './modules/organizations/link-params.js';
import { DeletionRunner } from './modules/organizations/deletion-runner.js';
import { ProgramsService } from './modules/programs/programs.service.js';
import { ProgramsRepository } from './modules/programs/programs.repository.js';
import { AffiliatesService } from './modules/affiliates/affiliates.service.js';
import { AffiliatesRepository } from './modules/affiliates/affiliates.repository.js';
import { ClicksService } from './modules/clicks/clicks.service.js';
import { ClicksRepository } from './modules/clicks/clicks.repository.js';
import { CustomerInserter, CustomersService } from './modules/customers/customers.service.js';
import { CustomersRepository } from './modules/customers/customers.repository.js';
import { ConversionsService } from './modules/conversions/conversions.service.js';
import { ChargeRecorder } from './modules/conversions/charge-recorder.js';
import { IntegrationsService } from './modules/integrations/integrations.service.js';
import { IntegrationsRepository } from './modules/integrations/integrations.repository.js';
import { CommissionsRepository } from './modules/commissions/commissions.repository.js';
import { ConversionsRepository } from './modules/conversions/conversions.repository.js';
import { CommissionsService } from './modules/commissions/commissions.service.js';
import { CouponsService } from './modules/coupons/coupons.service.js';
import { CouponsRepository } from './modules/coupons/coupons.repository.js';
import { PayoutsRepository } from './modules/payouts/payouts.repository.js';
import { PayoutsService } from './modules/payouts/payouts.service.js';
import { PayoutSender } from './modules/payouts/payout-sender.js';
import { PayoutSendsRepository } from './modules/payouts/payout-sends.repository.js';
import { SecretBox } from './security/secret-box.js';
import { EndpointsRepository } from './modules/events/endpoints.repository.js';
import { EndpointsService } from './modules/events/endpoints.service.js';
import { UrlGuard } from './modules/events/url-guard.js';
import { ReportsRepository } from './modules/reports/reports.repository.js';
import { ReportsService } from './modules/reports/reports.service.js';
import { ReportFolder } from './modules/reports/report-folder.js';
import { railCredentialCheck } from './modules/payouts/rails/credential-check.js';

export interface Services {
  organizations: OrganizationsService;
  /** The query parameters that name a partner in a link (modules/organizations/link-params.ts). */
  linkParams: LinkParamsService;
  /** Deletions of organizations and of test data, in batches, as jobs (modules/organizations/deletion-runner.ts). */
  dataDeletions: DeletionRunner;
  programs: ProgramsService;
  affiliates: AffiliatesService;
  clicks: ClicksService;
  customers: CustomersService;
  conversions: ConversionsService;
  /** Recording charges, refunds and cancellations for every channel (modules/conversions/charge-recorder.ts). */
  charges: ChargeRecorder;
  integrations: IntegrationsService;
  commissions: CommissionsService;
  coupons: CouponsService;
  payouts: PayoutsService;
  /** Sending payouts through PayPal, Stripe Connect and Wise, and recording their outcomes (modules/payouts/payout-sender.ts). */
  payoutSender: PayoutSender;
  /** Merchants' webhook endpoints and their delivery log (modules/events). */
  webhookEndpoints: EndpointsService;
  reports: ReportsService;
  /** Folds raw rows into the report summaries in the background (main.ts starts it). */
  reportFolder: ReportFolder;
  authenticator: ApiKeyAuthenticator;
  /** The attribution resolver with its caches: one per instance, shared by every service. */
  attribution: AttributionResolver;
  /** The caches a change notification reaches (db/change-notifications.ts): attribution's, customers' states and API keys. */
  caches: CacheChangeHandler;
}

/** How long cached program rules and API keys live at most (the safety net behind change notifications). */
export interface CacheTtls {
  apiKeyCacheTtlMs: number;
  programRuleCacheTtlMs?: number;
  /** Where background work (the report folder) logs. */
  logger?: Logger;
}

/** Secrets at rest (ENCRYPTION_KEY) and which URLs webhook endpoints may have (WEBHOOK_ALLOW_PRIVATE_URLS). */
export interface SecretSettings {
  encryptionKey?: string;
  allowPrivateWebhookUrls?: boolean;
}

export function createServices(orm: MikroORM, ttls: CacheTtls, secretSettings: SecretSettings = {}): Services {
  const secrets = new SecretBox(secretSettings.encryptionKey);
  // One repository per module, the module's only way to the database; the batched ones (clicks,
  // customers) exist once per instance, so that concurrent requests share their statements.
  const programsRepository = new ProgramsRepository(orm);
  const affiliatesRepository = new AffiliatesRepository(orm);
  const clicksRepository = new ClicksRepository(orm);
  const customersRepository = new CustomersRepository(orm);
  const reportsRepository = new ReportsRepository(orm);
  // The runner tells this instance's caches of what it deletes (caches below; every other instance hears of it by NOTIFY).
  const dataDeletions = new DeletionRunner(orm, ttls.logger ?? pino({ level: 'silent' }), {
    onChange: (change) => caches.changed(change),
  });
  const organizations = new OrganizationsService(new OrganizationsRepository(orm), dataDeletions);
  // One resolver per instance, so that its caches serve every service.
  const couponsRepository = new CouponsRepository(orm);
  const resolver = new AttributionResolver(
    {
      programs: programsRepository,
      affiliates: affiliatesRepository,
      clicks: clicksRepository,
      coupons: couponsRepository,
    },
    new AttributionCache(ttls.programRuleCacheTtlMs),
  );
  const authenticator = new ApiKeyAuthenticator(organizations, ttls.apiKeyCacheTtlMs);
  const customerInserter = new CustomerInserter(customersRepository);
  const customers = new CustomersService(customersRepository, resolver, customerInserter);
  const commissionsRepository = new CommissionsRepository(orm);
  const conversions = new ConversionsService(
    orm,
    new ConversionsRepository(orm, commissionsRepository),
    resolver,
    customerInserter,
    clicksRepository,
  );
  const integrations = new IntegrationsService(new IntegrationsRepository(orm), secrets, railCredentialCheck());
  const payoutsRepository = new PayoutsRepository(orm);
  const caches: CacheChangeHandler = {
    changed: (change) => {
      if (change.kind === 'program') resolver.forgetProgram(change.id);
      else if (change.kind === 'affiliate') resolver.forgetAffiliate(change.id);
      else if (change.kind === 'affiliate_links') resolver.forgetAffiliateLinks(change.id);
      else if (change.kind === 'organization_rows') {
        resolver.forgetOrganization(change.id);
        conversions.forgetOrganization(change.id);
      } else authenticator.forget(change.keyHash);
    },
    reset: () => {
      resolver.forgetAllChangeable();
      conversions.forgetAll();
      authenticator.forgetAll();
    },
  };
  return {
    attribution: resolver,
    organizations,
    linkParams: new LinkParamsService(orm),
    dataDeletions,
    programs: new ProgramsService(programsRepository, resolver),
    affiliates: new AffiliatesService(affiliatesRepository, resolver),
    clicks: new ClicksService(clicksRepository, resolver),
    customers,
    conversions,
    charges: new ChargeRecorder(conversions, customers, customersRepository),
    integrations,
    commissions: new CommissionsService(commissionsRepository),
    coupons: new CouponsService(couponsRepository, affiliatesRepository),
    payouts: new PayoutsService(payoutsRepository),
    payoutSender: new PayoutSender(
      new PayoutSendsRepository(orm),
      payoutsRepository,
      integrations,
      ttls.logger ?? pino({ level: 'silent' }),
    ),
    webhookEndpoints: new EndpointsService(
      new EndpointsRepository(orm),
      secrets,
      new UrlGuard(secretSettings.allowPrivateWebhookUrls ?? false),
    ),
    reports: new ReportsService(reportsRepository),
    reportFolder: new ReportFolder(reportsRepository, { logger: ttls.logger }),
    authenticator,
    caches,
  };
}
