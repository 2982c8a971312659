import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { WebhookLog } from '../../webhooks/webhook-log.js';
import type { IntegrationsService } from './integrations.service.js';

export const integrationsRouter = (integrations: IntegrationsService, webhookLog: WebhookLog) =>
  s.router(contract.integrations, {
    listEvents: async ({ req, query }) => ({
      status: 200,
      body: { success: true, data: await webhookLog.list(requireOrganization(req).id, query) },
    }),
    list: async ({ req }) => {
      const { id, account_id } = requireOrganization(req);
      return { status: 200, body: { success: true, data: { integrations: await integrations.list(id, account_id) } } };
    },
    put: async ({ req, params, body }) => {
      const { id, account_id } = requireOrganization(req);
      return {
        status: 200,
        body: { success: true, data: { integration: await integrations.put(id, params.provider, body, account_id) } },
      };
    },
    delete: async ({ req, params }) => {
      const { id, account_id } = requireOrganization(req);
      return {
        status: 200,
        body: { success: true, data: { integration: await integrations.remove(id, params.provider, account_id) } },
      };
    },
  });
