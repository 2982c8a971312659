/**
 * How the schema distributes over Citus (distributed PostgreSQL), by `organization_id`: the one
 * place that says which table is which. The catalog test (test/reliability/distribution-keys.test.ts)
 * reads PostgreSQL's catalog and fails on any table missing from here, and on any primary, unique
 * or foreign key of a distributed table that does not include `organization_id`; the README's
 * "Scaling out" section prints the Citus calls from these lists.
 */

/** The column every tenant table is distributed by: an organization's rows live together on one node. */
export const DISTRIBUTION_COLUMN = 'organization_id';

/**
 * Organization-level tables: small, read on every request, copied to every node (create_reference_table).
 * The dashboard's people (modules/people) are found by e-mail or token before the organization is
 * known (sign-in, a session cookie, an invitation's link), so they are reference tables too.
 */
export const REFERENCE_TABLES = [
  'organizations',
  'api_keys',
  'users',
  'sessions',
  'accounts',
  'verifications',
  'invitations',
] as const;

/**
 * Tables that stay on the coordinator, not distributed: operational state that is no tenant's data
 * (rate-limit counters keyed by API-key hash or client address; the migrations' own record).
 */
export const LOCAL_TABLES = ['rate_limits', 'mikro_orm_migrations'] as const;

/**
 * Tenant tables, distributed by DISTRIBUTION_COLUMN and co-located with one another (so joins and
 * foreign keys between them stay on one node), in the order a Citus deployment distributes them:
 * a referenced table before the tables that reference it.
 */
export const DISTRIBUTED_TABLES = [
  'programs',
  'imports',
  'import_rows',
  'affiliates',
  'affiliate_link_tokens',
  'affiliate_link_aliases',
  'clicks',
  'customers',
  'conversions',
  'conversion_refunds',
  'integrations',
  'webhook_events',
  'webhook_rejections',
  'payment_references',
  'payouts',
  'commissions',
  'payout_items',
  'webhook_endpoints',
  'outbound_events',
  'outbound_event_batches',
  'webhook_deliveries',
  'report_affiliate_totals',
  'report_affiliate_days',
  'report_program_days',
  'report_deltas',
  'report_totals_through',
  'coupons',
  'suppressed_clicks',
  'partner_sign_in_links',
  'partner_sessions',
  'test_emails',
  'partner_notices',
  'tax_forms',
  // Deletions' receipts (Migration20270112000000_data_deletions): no key to the organization (they outlive it).
  'data_deletions',
] as const;

/** The SQL a Citus deployment runs once, after the migrations, to distribute the schema. */
export function citusDistributionSql(): string[] {
  const [first, ...rest] = DISTRIBUTED_TABLES;
  return [
    ...REFERENCE_TABLES.map((t) => `select create_reference_table('${t}');`),
    `select create_distributed_table('${first}', '${DISTRIBUTION_COLUMN}');`,
    ...rest.map(
      (t) => `select create_distributed_table('${t}', '${DISTRIBUTION_COLUMN}', colocate_with => '${first}');`,
    ),
  ];
}
