import { initContract } from '@ts-rest/core';
import { apiKeyErrorResponses, everyRouteErrorResponses } from './common/errors.js';
import { adminContract } from './resources/admin.js';
import { affiliatesContract } from './resources/affiliates.js';
import { clicksContract } from './resources/clicks.js';
import { commissionsContract } from './resources/commissions.js';
import { couponsContract } from './resources/coupons.js';
import { exportsContract } from './resources/exports.js';
import { payoutsContract } from './resources/payouts.js';
import { importsContract } from './resources/imports.js';
import { conversionsContract } from './resources/conversions.js';
import { customersContract } from './resources/customers.js';
import { dataRetentionContract } from './resources/data-retention.js';
import { linkParamsContract } from './resources/link-params.js';
import { integrationsContract, webhooksContract } from './resources/integrations.js';
import { meContract } from './resources/me.js';
import { brandingContract } from './resources/branding.js';
import { programsContract } from './resources/programs.js';
import { accountContract, operatorPeopleContract, peopleContract } from './resources/people.js';
import { reportsContract } from './resources/reports.js';
import { partnerContract, partnerInvitationsContract, partnerPublicContract } from './resources/partner.js';
import { portalPreviewContract } from './resources/portal-preview.js';
import { testDataContract } from './resources/test-data.js';
import { testEmailsContract } from './resources/test-emails.js';
import { trackingContract } from './resources/tracking.js';
import { webhookEndpointsContract } from './resources/webhook-endpoints.js';
import { taxFormReviewContract, taxFormsContract } from './resources/tax-forms.js';
import { stripeOnboardingContract } from './resources/payout-settings.js';

const c = initContract();

/** Every merchant endpoint: authenticated by the organization API key. */
export const merchantContract = c.router(
  {
    me: meContract,
    branding: brandingContract,
    programs: programsContract,
    affiliates: affiliatesContract,
    clicks: clicksContract,
    customers: customersContract,
    conversions: conversionsContract,
    integrations: integrationsContract,
    commissions: commissionsContract,
    coupons: couponsContract,
    exports: exportsContract,
    payouts: payoutsContract,
    webhookEndpoints: webhookEndpointsContract,
    people: peopleContract,
    reports: reportsContract,
    partnerInvitations: partnerInvitationsContract,
    portalPreview: portalPreviewContract,
    dataRetention: dataRetentionContract,
    linkParams: linkParamsContract,
    imports: importsContract,
    testData: testDataContract,
    testEmails: testEmailsContract,
    taxForms: taxFormsContract,
    taxFormReview: taxFormReviewContract,
    stripeOnboarding: stripeOnboardingContract,
  },
  {
    strictStatusCodes: true,
    commonResponses: apiKeyErrorResponses,
  },
);

export const contract = c.router(
  {
    ...merchantContract,
    admin: adminContract,
    adminPeople: operatorPeopleContract,
    // Accepting an invitation (no credential but the invitation's token): no API-key 401 either.
    account: accountContract,
    webhooks: webhooksContract,
    // Public (no API key): its own key so that it does not inherit the merchant 401 and 429.
    tracking: trackingContract,
    // The partner portal (/partner/api): its own credential, the partner session; never an API key.
    partnerPublic: partnerPublicContract,
    partner: partnerContract,
  },
  { strictStatusCodes: true, commonResponses: everyRouteErrorResponses },
);

export type Contract = typeof contract;
