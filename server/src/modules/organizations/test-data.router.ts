import { contract } from '@affiliate-attribution/contract';
import { s } from '../../http/router-types.js';
import { requireOrganization } from '../../http/request-context.js';
import type { CacheChange } from '../../db/change-notifications.js';
import type { OrganizationsService } from './organizations.service.js';

/** DELETE /api/test-data: the request's test organization's rows, its settings kept (organization-data.ts, TEST_DATA_KEPT). */
export const testDataRouter = (organizations: OrganizationsService, forget: (change: CacheChange) => void) =>
  s.router(contract.testData, {
    delete: async ({ req }) => {
      const { deleted, changes } = await organizations.deleteTestData(requireOrganization(req));
      // The test key keeps working: this instance's program and affiliate caches drop the deleted rows now.
      for (const change of changes) forget(change);
      return { status: 200, body: { success: true, data: { deleted } } };
    },
  });
