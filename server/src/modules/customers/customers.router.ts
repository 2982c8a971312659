import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { CustomersService } from './customers.service.js';

export const customersRouter = (customers: CustomersService) =>
  s.router(contract.customers, {
    create: async ({ req, body }) => {
      const { customer, deduped } = await customers.create(requireOrganization(req).id, body);
      return { status: deduped ? 200 : 201, body: { success: true, data: { customer }, deduped } };
    },
    get: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { customer: await customers.get(requireOrganization(req).id, params.id) } },
    }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: {
        success: true,
        data: { customer: await customers.updateStatus(requireOrganization(req).id, params.id, body.status) },
      },
    }),
  });
