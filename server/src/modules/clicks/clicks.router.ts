import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { ClicksService } from './clicks.service.js';
import type { PipelineRequest } from '../../http/pipeline.js';

export const clicksRouter = (clicks: ClicksService) =>
  s.router(contract.clicks, {
    create: async ({ req, body }) => {
      const { click, recorded } = await clicks.create(requireOrganization(req).id, body);
      (req as PipelineRequest).clickRecorded = recorded;
      return { status: 201, body: { success: true, data: { click } } };
    },
  });
