import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { ReportsService } from './reports.service.js';

export const reportsRouter = (reports: ReportsService) =>
  s.router(contract.reports, {
    affiliates: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await reports.affiliates(requireOrganization(req).id, query) },
    }),
    timeseries: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await reports.timeseries(requireOrganization(req).id, query) },
    }),
  });
