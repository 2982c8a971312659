import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { EndpointsService } from './endpoints.service.js';

export const webhookEndpointsRouter = (endpoints: EndpointsService) =>
  s.router(contract.webhookEndpoints, {
    create: async ({ req, body }) => ({
      status: 201,
      body: { success: true, data: await endpoints.create(requireOrganization(req).id, body) },
    }),
    list: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await endpoints.list(requireOrganization(req).id, query) },
    }),
    get: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { webhook_endpoint: await endpoints.get(requireOrganization(req).id, params.id) } },
    }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: {
        success: true,
        data: { webhook_endpoint: await endpoints.update(requireOrganization(req).id, params.id, body) },
      },
    }),
    delete: async ({ req, params }) => ({
      status: 200,
      body: {
        success: true,
        data: { webhook_endpoint: await endpoints.delete(requireOrganization(req).id, params.id) },
      },
    }),
    rotateSecret: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: await endpoints.rotateSecret(requireOrganization(req).id, params.id) },
    }),
    listDeliveries: async ({ req, params, query }) => ({
      status: 200,
      body: { success: true, data: await endpoints.deliveries(requireOrganization(req).id, params.id, query) },
    }),
    retryDelivery: async ({ req, params }) => ({
      status: 202,
      body: {
        success: true,
        data: { delivery: await endpoints.retryDelivery(requireOrganization(req).id, params.id) },
      },
    }),
  });
