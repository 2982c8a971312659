import { notifyChange, type CacheChange } from '../../db/change-notifications.js';
import type { Sql } from '../../db/sql.js';

/**
 * Every table holding an organization's rows, in the order they are deleted: a table before every
 * table it refers to, so that each DELETE leaves no row referring to what the next one deletes.
 * The foreign keys keep their default (NO ACTION): a mistaken DELETE of one affiliate, conversion
 * or click that the ledger refers to is refused, never cascaded into the ledger; deleting
 * everything an organization owns is this one list, run in one transaction (all or nothing). The
 * same list serves a later partial reset (test data, an import undone) with a narrower condition.
 * `test/reliability/organization-data.test.ts` holds it complete and ordered against the catalog.
 */
export const ORGANIZATION_TABLES = [
  'test_emails',
  'report_deferred_commissions',
  'report_affiliate_revenue',
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
function ownedRows(table: OrganizationTable): string {
  if (table === 'organizations') return 'id = ?';
  if (table === 'sessions' || table === 'accounts') return 'user_id in (select id from users where organization_id = ?)';
  return 'organization_id = ?';
}

/** The report fold's lock (baseline/report-functions.ts): no fold writes the organization's summaries while they are deleted. */
const REPORT_FOLD_LOCK = 'select pg_advisory_xact_lock(7262010001)';

/**
 * What a test-data reset keeps of the test organization (DELETE /api/test-data): the organization
 * itself and its settings, as Stripe keeps them: API keys, payment-provider integrations, webhook
 * endpoints, and people (a twin has none of its own; dashboard users belong to the live one).
 * Nothing in any other table refers to these, so deleting everything else leaves no dangling key.
 */
export const TEST_DATA_KEPT: ReadonlySet<OrganizationTable> = new Set(['organizations', 'api_keys', 'integrations', 'webhook_endpoints', 'users', 'accounts', 'sessions', 'invitations']);

/**
 * Deletes, table by table in ORGANIZATION_TABLES' order, the rows of one organization, leaving
 * the tables in `keep`; answers the rows deleted per table deleted from. The caller holds the
 * organization's row locked and the report fold's lock (a fold never writes summaries of rows
 * being deleted). Every instance drops the organization's programs and affiliates from its caches
 * when the transaction commits.
 */
async function deleteRowsOf(sql: Sql, organizationId: string, keep: ReadonlySet<OrganizationTable> = new Set()): Promise<{ deleted: Record<string, number>; changes: CacheChange[] }> {
  const cached = await sql.rows<{ kind: 'program' | 'affiliate'; id: string }>(
    `select 'program' as kind, id from programs where organization_id = ? union all select 'affiliate', id from affiliates where organization_id = ?`,
    [organizationId, organizationId],
  );
  const deleted: Record<string, number> = {};
  for (const table of ORGANIZATION_TABLES) {
    if (keep.has(table)) continue;
    const [count] = await sql.rows<{ n: number }>(`with gone as (delete from ${table} where ${ownedRows(table)} returning 1) select count(*)::int as n from gone`, [organizationId]);
    deleted[table] = count.n;
  }
  const run = (query: string, params: unknown[]) => sql.rows(query, params);
  for (const change of cached) await notifyChange(run, change);
  return { deleted, changes: cached };
}

/**
 * Deletes everything a live organization owns, and its test twin with everything the twin owns
 * (the twin first: its row refers to the live one), in `sql`'s transaction, and answers the rows
 * deleted per table, both modes added up (undefined when there is no such live organization: a
 * twin is deleted only with its live organization). Every instance drops the API keys of both,
 * and their programs and affiliates, from its caches when the transaction commits.
 */
export async function deleteOrganizationData(sql: Sql, organizationId: string): Promise<{ deleted: Record<string, number>; keyHashes: string[] } | undefined> {
  const found = await sql.rows<{ id: string }>('select id from organizations where (id = ? and livemode) or live_organization_id = ? order by livemode for update', [organizationId, organizationId]);
  if (!found.some((o) => o.id === organizationId)) return undefined;
  await sql.rows(REPORT_FOLD_LOCK);
  const ids = found.map((o) => o.id); // the twin first (livemode false sorts first), then the live organization
  const keyHashes = (await sql.rows<{ key_hash: string }>('select key_hash from api_keys where organization_id = any(?::uuid[])', [ids])).map((r) => r.key_hash);
  const deleted: Record<string, number> = {};
  for (const id of ids) {
    for (const [table, n] of Object.entries((await deleteRowsOf(sql, id)).deleted)) deleted[table] = (deleted[table] ?? 0) + n;
  }
  const run = (query: string, params: unknown[]) => sql.rows(query, params);
  for (const keyHash of keyHashes) await notifyChange(run, { kind: 'api_key', keyHash });
  return { deleted, keyHashes };
}

/**
 * Deletes every row of a test organization but its settings (TEST_DATA_KEPT), in `sql`'s
 * transaction, and answers the rows deleted per table. Refuses a live organization: this never
 * deletes live data, whatever the caller passes. The twin's report summaries go with the rest
 * (they hold test data only), so its reports read as if nothing had been written. Answers too the
 * programs and affiliates deleted: the test key keeps working, so the caller drops them from this
 * instance's caches at once (other instances drop them on the notification).
 */
export async function deleteTestData(sql: Sql, testOrganizationId: string): Promise<{ deleted: Record<string, number>; changes: CacheChange[] }> {
  const [found] = await sql.rows<{ livemode: boolean }>('select livemode from organizations where id = ? for update', [testOrganizationId]);
  if (!found || found.livemode) throw new Error('deleteTestData: not a test organization');
  await sql.rows(REPORT_FOLD_LOCK);
  return deleteRowsOf(sql, testOrganizationId, TEST_DATA_KEPT);
}
