/**
 * How the schema distributes over Citus (distributed PostgreSQL), by `organization_id`: the one
 * place that says which table is which. On a database with the citus extension the migrations
 * distribute the schema from these lists (db/citus.ts, Migration20270202000000_citus_distribution);
 * on plain PostgreSQL they are only read by the catalog test
 * (test/reliability/distribution-keys.test.ts), which fails on any table missing from here, on any
 * primary, unique or foreign key of a distributed table without `organization_id`, and, on a Citus
 * cluster, on any table whose real distribution differs from these lists.
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
 * Tables that stay on the coordinator, not distributed: the migrations' own record (read before
 * anything is distributed). The job queue's tables live in pg-boss's own schema, local too.
 */
export const LOCAL_TABLES = ['mikro_orm_migrations'] as const;

/**
 * Tables distributed by a key of their own, each in a co-location group of its own: no tenant's
 * data and no organization to shard by. Rate-limit counters are keyed by API-key hash or client
 * address and written on every limited request: a reference table would write every node on each
 * one, a local table would not be reachable from the workers; hashed by that key, each counter is
 * one shard's row.
 */
export const KEYED_TABLES = [{ table: 'rate_limits', column: 'key' }] as const;

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

/** The table every tenant table is co-located with. */
export const COLOCATION_ANCHOR = DISTRIBUTED_TABLES[0];

/**
 * The Citus calls that distribute the schema, in order (db/citus.ts runs them with the foreign
 * keys between these tables dropped, then re-creates those keys).
 */
export function citusDistributionSql(): string[] {
  return [
    ...REFERENCE_TABLES.map((t) => `select create_reference_table('${t}');`),
    ...DISTRIBUTED_TABLES.map((t) => distributeTableSql(t)),
    ...KEYED_TABLES.map(
      ({ table, column }) => `select create_distributed_table('${table}', '${column}', colocate_with => 'none');`,
    ),
  ];
}

/** The call that makes `table` a tenant table, co-located with every other. */
export function distributeTableSql(table: string): string {
  return table === COLOCATION_ANCHOR
    ? `select create_distributed_table('${table}', '${DISTRIBUTION_COLUMN}', colocate_with => 'none');`
    : `select create_distributed_table('${table}', '${DISTRIBUTION_COLUMN}', colocate_with => '${COLOCATION_ANCHOR}');`;
}
