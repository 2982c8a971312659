import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { organizationOf } from '../../http/organization-context.js';
import { requireOrganization } from '../../http/request-context.js';
import type { LinkParamsService } from '../organizations/link-params.js';

export const meRouter = (linkParams: LinkParamsService) =>
  s.router(contract.me, {
    get: async ({ req }) => {
      const organization = requireOrganization(req);
      const link_params = await linkParams.get(organization.id);
      return {
        status: 200,
        body: { success: true, data: { organization: { ...organizationOf(organization), link_params } } },
      };
    },
  });
