import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { WebhookLog } from '../../webhooks/webhook-log.js';
import type { IntegrationsService } from './integrations.service.js';

export const integrationsRouter = (integrations: IntegrationsService, webhookLog: WebhookLog) =>
  s.router(contract.integrations, {
    listEvents: async ({ req, query }) => ({ status: 200, body: { success: true, data: await webhookLog.list(requireOrganization(req).id, query) } }),
    list: async ({ req }) => ({
      status: 200,
      body: { success: true, data: { integrations: await integrations.list(requireOrganization(req).id) } },
    }),
    put: async ({ req, params, body }) => ({
      status: 200,
      body: { success: true, data: { integration: await integrations.put(requireOrganization(req).id, params.provider, body) } },
    }),
    delete: async ({ req, params }) => ({
      status: 200,
      body: { success: true, data: { integration: await integrations.remove(requireOrganization(req).id, params.provider) } },
    }),
  });
