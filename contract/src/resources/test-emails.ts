import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ErrorBody, errorResponses } from '../common/errors.js';
import { NextCursor, PageQuery } from '../common/pagination.js';
import { Timestamp, Uuid } from '../common/primitives.js';

const c = initContract();

/** The 403 a live key gets: test e-mails exist only in test mode. */
export const TEST_EMAILS_LIVE_MESSAGE =
  'Test e-mails exist only in test mode: use a test API key (svc_test_…), or switch the dashboard to test mode';

export const TestEmail = z
  .object({
    id: Uuid.describe('The test e-mail id.'),
    to: z.string().describe('Who would have received it: a partner or an applicant of the test data.'),
    subject: z.string().describe('Its subject, as it would have been sent.'),
    text: z.string().describe('Its whole text, links included: follow a sign-in link to try the partner flow.'),
    created_at: Timestamp.describe('When the service would have sent it.'),
    livemode: z.literal(false).describe('Always false: only test data has test e-mails.'),
  })
  .describe(
    'An e-mail of test data: in test mode the service sends no e-mail to a partner or a customer, and keeps it here instead (and in the log).',
  );

export const testEmailsContract = c.router({
  list: {
    method: 'GET',
    path: '/api/test-emails',
    summary: 'List test e-mails',
    description:
      'The e-mails test data would have sent to partners and customers (portal invitations, sign-in links, applications and their decisions), newest first, with cursor pagination. Test mode only: a live key answers 403.',
    query: PageQuery,
    responses: {
      200: z.object({
        success: z.literal(true),
        data: z.object({ test_emails: z.array(TestEmail), next_cursor: NextCursor }),
      }),
      400: errorResponses[400],
      403: ErrorBody.describe('A live key or the dashboard in live mode: test e-mails are read in test mode only.'),
    },
  },
});

export type TestEmail = z.infer<typeof TestEmail>;
