import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { PayoutSettingsService } from './payout-settings.service.js';

export const stripeOnboardingRouter = (settings: PayoutSettingsService) =>
  s.router(contract.stripeOnboarding, {
    create: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: await settings.onboardAffiliate(requireOrganization(req).id, params.id) },
    }),
  });
