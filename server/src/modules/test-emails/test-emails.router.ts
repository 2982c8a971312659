import { contract } from '@affiliate-attribution/contract';
import { createExpressEndpoints } from '@ts-rest/express';
import type { Express } from 'express';
import { requireOrganization } from '../../http/request-context.js';
import { s, type EndpointOptions } from '../../http/router-types.js';
import type { TestEmails } from './test-emails.js';

/** GET /api/test-emails: the e-mails test data would have sent (test mode only). */
export function mountTestEmails(app: Express, testEmails: TestEmails, options: EndpointOptions): void {
  createExpressEndpoints(
    contract.testEmails,
    s.router(contract.testEmails, {
      list: async ({ req, query }) => ({
        status: 200,
        body: { success: true, data: await testEmails.list(requireOrganization(req).id, query) },
      }),
    }),
    app,
    options,
  );
}
