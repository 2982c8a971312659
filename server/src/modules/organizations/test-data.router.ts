import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import { deletionView } from './data-deletion.js';
import type { OrganizationsService } from './organizations.service.js';

/** How long DELETE /api/test-data waits for its job: a small twin's reset answers 200 with the counts, as before; a big one 202. */
export const TEST_DATA_RESET_WAIT_MS = 5_000;

/** DELETE /api/test-data: the request's test organization's rows, its settings kept (organization-data.ts, TEST_DATA_KEPT), by the deletion job. */
export const testDataRouter = (organizations: OrganizationsService, waitMs = TEST_DATA_RESET_WAIT_MS) =>
  s.router(contract.testData, {
    delete: async ({ req }) => {
      const deletion = deletionView(await organizations.deleteTestData(requireOrganization(req), waitMs));
      const data = { deleted: deletion.deleted, deletion };
      return deletion.status === 'completed'
        ? { status: 200, body: { success: true, data } }
        : { status: 202, body: { success: true, data } };
    },
    getDeletion: async ({ req }) => ({
      status: 200,
      body: {
        success: true,
        data: { deletion: deletionView(await organizations.testDataDeletion(requireOrganization(req))) },
      },
    }),
  });
