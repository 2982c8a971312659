import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { ImportsService } from './imports.service.js';

export const importsRouter = (imports: ImportsService) =>
  s.router(contract.imports, {
    create: async ({ req, body }) => ({
      status: 202,
      body: { success: true, data: { import: await imports.create(requireOrganization(req).id, body) } },
    }),
    list: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await imports.list(requireOrganization(req).id, query) },
    }),
    get: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { import: await imports.get(requireOrganization(req).id, params.id) } },
    }),
    cancel: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { import: await imports.cancel(requireOrganization(req).id, params.id) } },
    }),
    remove: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { import: await imports.undo(requireOrganization(req).id, params.id) } },
    }),
  });
