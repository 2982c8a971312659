import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { ProgramsService } from './programs.service.js';

export const programsRouter = (programs: ProgramsService) =>
  s.router(contract.programs, {
    create: async ({ req, body }) => ({
      status: 201,
      body: { success: true, data: { program: await programs.create(requireOrganization(req).id, body) } },
    }),
    list: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await programs.list(requireOrganization(req).id, query) },
    }),
    get: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { program: await programs.get(requireOrganization(req).id, params.id) } },
    }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: { success: true, data: { program: await programs.update(requireOrganization(req).id, params.id, body) } },
    }),
  });
