import { sql, type RawBuilder } from 'kysely';
/**
 * Every table holding an organization's rows, in the order they are deleted: a table before every
 * table it refers to, so that each DELETE leaves no row referring to what the next one deletes.
 * The foreign keys keep their default (NO ACTION): a mistaken DELETE of one affiliate, conversion
 * or click that the ledger refers to is refused, never cascaded into the ledger; deleting
 * everything an organization owns is this one list, walked in bounded batches by a job
 * (data-deletion.ts, deletion-runner.ts). The same list serves a test-data reset with the tables
 * it keeps left out.
 * `test/reliability/organization-data.test.ts` holds it complete and ordered against the catalog.
 */
export const ORGANIZATION_TABLES = [
  'test_emails',
  'partner_notices',
  'report_deltas',
  'report_totals_through',
  'report_affiliate_totals',
  'report_affiliate_days',
  'report_program_days',
  'webhook_deliveries',
  'outbound_events',
  'outbound_event_batches',
  'webhook_endpoints',
  'payout_items',
  'commissions',
  'payouts',
  'conversion_refunds',
  'conversions',
  'customers',
  'clicks',
  'suppressed_clicks',
  'coupons',
  'partner_sessions',
  'partner_sign_in_links',
  'tax_forms',
  'affiliate_link_aliases',
  'affiliate_link_tokens',
  'affiliates',
  'import_rows',
  'imports',
  'programs',
  'integrations',
  'payment_references',
  'webhook_events',
  'webhook_rejections',
  'invitations',
  'sessions',
  'accounts',
  'users',
  'api_keys',
  'organizations',
] as const;

export type OrganizationTable = (typeof ORGANIZATION_TABLES)[number];

/** The rows of `table` that the organization (the one parameter) owns: by organization_id, or by its users for theirs. */
export function ownedRows(table: OrganizationTable, organizationId: string): RawBuilder<unknown> {
  if (table === 'organizations') return sql`id = ${organizationId}`;
  if (table === 'sessions' || table === 'accounts')
    return sql`user_id in (select id from users where organization_id = ${organizationId})`;
  return sql`organization_id = ${organizationId}`;
}

/**
 * What a test-data reset keeps of the test organization (DELETE /api/test-data): the organization
 * itself and its settings, as Stripe keeps them: API keys, payment-provider integrations, webhook
 * endpoints, and people (a twin has none of its own; dashboard users belong to the live one).
 * Nothing in any other table refers to these, so deleting everything else leaves no dangling key.
 */
export const TEST_DATA_KEPT: ReadonlySet<OrganizationTable> = new Set([
  'organizations',
  'api_keys',
  'integrations',
  'webhook_endpoints',
  'users',
  'accounts',
  'sessions',
  'invitations',
]);

/**
 * The one table with an organization_id that a deletion never deletes from: the deletions'
 * receipts (Migration20270112000000_data_deletions), which outlive the organization they record.
 */
export const DELETION_RECEIPTS = 'data_deletions';
