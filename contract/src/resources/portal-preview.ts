import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ErrorBody, errorResponses, jsonBodyErrorResponses } from '../common/errors.js';
import { Timestamp } from '../common/primitives.js';

const c = initContract();

/** The answer of a preview asked in live mode (a live key, or a dashboard session without `X-Mode: test`). */
export const PREVIEW_IS_FOR_TEST_PARTNERS = 'preview is for test partners';

/**
 * The merchant's look at the partner portal as one of its test affiliates (spec/test-mode.md,
 * "Dashboard and portal"): a short-lived, single-use link that signs the browser in to the portal
 * as that partner, a real partner session of the test data.
 */
export const portalPreviewContract = c.router({
  create: {
    method: 'POST',
    path: '/api/affiliates/:id/portal-preview',
    summary: 'Preview the partner portal as a test affiliate',
    description:
      'Test mode only (a test key, or a dashboard session with `X-Mode: test`): answers a link that signs the browser in to the partner portal as this test affiliate, to see what a partner sees. The link works once, for 5 minutes; the portal shows it is a preview of test data. A live affiliate (live mode): 403 `preview is for test partners`; an id of the other mode: 404, as on every route.',
    pathParams: z.object({ id: z.string().describe('Affiliate id (UUID) of a test affiliate.') }),
    body: z.object({}).optional(),
    responses: {
      201: z.object({
        success: z.literal(true),
        data: z.object({
          url: z
            .string()
            .describe(
              'Opens the partner portal signed in as this affiliate (`{base_url}/portal/{organization_id}/preview?token=…`): once, before `expires_at`.',
            ),
          expires_at: Timestamp.describe('After this instant the link no longer signs in.'),
        }),
      }),
      ...jsonBodyErrorResponses,
      403: ErrorBody.describe('A live affiliate, asked in live mode: `preview is for test partners`.'),
      404: errorResponses[404],
    },
  },
});
