import { notifyChange } from '../../db/change-notifications.js';
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
 * Deletes everything the organization owns, in `sql`'s transaction, and answers the rows deleted
 * per table (undefined when there is no such organization). Every instance drops the
 * organization's API keys, programs and affiliates from its caches when the transaction commits.
 */
export async function deleteOrganizationData(sql: Sql, organizationId: string): Promise<{ deleted: Record<string, number>; keyHashes: string[] } | undefined> {
  const [found] = await sql.rows<{ id: string }>('select id from organizations where id = ? for update', [organizationId]);
  if (!found) return undefined;
  await sql.rows(REPORT_FOLD_LOCK);
  const keyHashes = (await sql.rows<{ key_hash: string }>('select key_hash from api_keys where organization_id = ?', [organizationId])).map((r) => r.key_hash);
  const cached = await sql.rows<{ kind: 'program' | 'affiliate'; id: string }>(
    `select 'program' as kind, id from programs where organization_id = ? union all select 'affiliate', id from affiliates where organization_id = ?`,
    [organizationId, organizationId],
  );
  const deleted: Record<string, number> = {};
  for (const table of ORGANIZATION_TABLES) {
    const [count] = await sql.rows<{ n: number }>(`with gone as (delete from ${table} where ${ownedRows(table)} returning 1) select count(*)::int as n from gone`, [organizationId]);
    deleted[table] = count!.n;
  }
  const run = (query: string, params: unknown[]) => sql.rows(query, params);
  for (const keyHash of keyHashes) await notifyChange(run, { kind: 'api_key', keyHash });
  for (const change of cached) await notifyChange(run, change);
  return { deleted, keyHashes };
}
