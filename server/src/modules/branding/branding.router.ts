import { contract } from '@affiliate-attribution/contract';
import { requireOrganization } from '../../http/request-context.js';
import { s } from '../../http/router-types.js';
import type { BrandingService } from './branding.js';

/** The branding is the account's (the live organization's): the same whichever mode the key or session is in. */
export const brandingRouter = (branding: BrandingService) =>
  s.router(contract.branding, {
    get: async ({ req }) => ({
      status: 200,
      body: { success: true, data: { branding: await branding.get(requireOrganization(req).account_id) } },
    }),
    update: async ({ req, body }) => ({
      status: 200,
      body: { success: true, data: { branding: await branding.update(requireOrganization(req).account_id, body) } },
    }),
  });
