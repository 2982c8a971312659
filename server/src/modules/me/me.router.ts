import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { organizationOf } from '../../http/organization-context.js';
import { requireOrganization } from '../../http/request-context.js';

export const meRouter = s.router(contract.me, {
  get: async ({ req }) => ({
    status: 200,
    body: { success: true, data: { organization: organizationOf(requireOrganization(req)) } },
  }),
});
