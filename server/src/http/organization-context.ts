import type { Organization } from '@affiliate-attribution/contract';
import { BadRequestError } from './errors.js';

/**
 * The organization a request acts for (shared/spec/test-mode.md). Test data lives in a twin
 * organization (Migration20270105000000_test_mode), so `id` is the organization whose rows the
 * request reads and writes: the live organization's with a live key, its test twin's with a test
 * key or a test-mode dashboard session. Every query keeps reading `id`, and so never sees the
 * other mode's rows.
 */
export interface OrganizationContext {
  /** The organization whose rows are read and written: the test twin in test mode. */
  id: string;
  name: string;
  /** False in test mode: every row this request reads or writes is test data. */
  livemode: boolean;
  /** The live organization's id: what the merchant knows (webhook URLs, the snippet, /api/me), the same in both modes. */
  account_id: string;
}

/** The organization as the API shows it (GET /api/me): the account's id, in either mode. */
export function organizationOf(context: OrganizationContext): Organization {
  return { id: context.account_id, name: context.name, livemode: context.livemode };
}

/** The dashboard's test-mode switch: `X-Mode: test` on a session request acts on the test data. */
export const MODE_HEADER = 'x-mode';

/**
 * The mode an `X-Mode` header asks for: live without it (or `live`), test with `test`; any other
 * value is refused (400) rather than silently taken as live. A session acts in the mode asked
 * for (modules/people/session.ts); an API key has its own mode, and a header that contradicts it
 * is refused (http/authentication.ts): a client that believes it writes test data never writes
 * live data.
 */
export function requestedLivemode(header: string | string[] | undefined): boolean {
  if (header === undefined || header === 'live') return true;
  if (header === 'test') return false;
  throw new BadRequestError(
    'X-Mode: must be "live" or "test" (the dashboard\'s test-mode switch); leave it out for live data',
  );
}
