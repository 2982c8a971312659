import { createExpressEndpoints } from '@ts-rest/express';
import type { Express } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { contract } from '@affiliate-attribution/contract';
import type { EndpointOptions } from '../../http/router-types.js';
import { SecretBox } from '../../security/secret-box.js';
import { TAX_FORM_BODY_LIMIT_BYTES } from '../tax-forms/document-type.js';
import { TaxFormsRepository } from '../tax-forms/tax-forms.repository.js';
import { TaxFormsService } from '../tax-forms/tax-forms.service.js';
import { taxFormReviewRouter, taxFormsRouter } from '../tax-forms/tax-forms.router.js';
import { PayoutSettingsRepository } from './payout-settings.repository.js';
import { PayoutSettingsService, type StripePlatform } from './payout-settings.service.js';
import { stripeOnboardingRouter } from './payout-settings.router.js';

export interface PartnerPayouts {
  taxForms: TaxFormsService;
  payoutSettings: PayoutSettingsService;
  /** Routes whose JSON body may pass the 1 MiB limit (http/stages.ts): a tax form upload, a document of up to 10 MiB in base64. */
  jsonBodyLimits: { method: string; path: string; bytes: number }[];
  /** The merchant's routes under /api (the partner's are the portal's: modules/partners). */
  mountRoutes(app: Express, options: EndpointOptions): void;
}

/**
 * The partner's side of payouts (shared/spec/payout-rails.md, "Partners"): tax forms
 * (modules/tax-forms) and how the partner is paid, Stripe Connect onboarding included.
 * `encryptionKey`: ENCRYPTION_KEY, which seals the tax documents; `publicBaseUrl`: where Stripe sends
 * people back after onboarding.
 */
export function createPartnerPayouts(
  orm: MikroORM,
  deps: {
    encryptionKey: string | undefined;
    integrations: StripePlatform['integrations'];
    publicBaseUrl: string;
    stripeSettings?: StripePlatform['settings'];
  },
): PartnerPayouts {
  const taxForms = new TaxFormsService(new TaxFormsRepository(orm), new SecretBox(deps.encryptionKey));
  const payoutSettings = new PayoutSettingsService(
    new PayoutSettingsRepository(orm),
    { integrations: deps.integrations, settings: deps.stripeSettings },
    deps.publicBaseUrl,
  );
  return {
    taxForms,
    payoutSettings,
    jsonBodyLimits: [
      {
        method: contract.partner.submitTaxForm.method,
        path: contract.partner.submitTaxForm.path,
        bytes: TAX_FORM_BODY_LIMIT_BYTES,
      },
    ],
    mountRoutes(app, options) {
      createExpressEndpoints(contract.taxForms, taxFormsRouter(taxForms), app, options);
      createExpressEndpoints(contract.taxFormReview, taxFormReviewRouter(taxForms), app, options);
      createExpressEndpoints(contract.stripeOnboarding, stripeOnboardingRouter(payoutSettings), app, options);
    },
  };
}
