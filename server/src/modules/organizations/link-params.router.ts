import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { LinkParamsService } from './link-params.js';

export const linkParamsRouter = (linkParams: LinkParamsService) =>
  s.router(contract.linkParams, {
    get: async ({ req }) => ({
      status: 200,
      body: { success: true, data: { link_params: await linkParams.get(requireOrganization(req).id) } },
    }),
    update: async ({ req, body }) => ({
      status: 200,
      body: {
        success: true,
        data: { link_params: await linkParams.set(requireOrganization(req).id, body.link_params) },
      },
    }),
  });
