import { notifyChanges, type CacheChange } from '../../db/change-notifications.js';
import { newRowId } from '../../db/row-ids.js';
import { REFERENCE_TABLES } from '../../db/distribution.js';
import type { Db } from '../../db/sql.js';
import { ORGANIZATION_TABLES, TEST_DATA_KEPT, ownedRows, type OrganizationTable } from './organization-data.js';
import { sql } from 'kysely';

/**
 * The tables whose rows the attribution caches hold under the organization (attribution/cache.ts:
 * slugs and aliases, clicks by id and cookie; conversions.service.ts: customers' states): a batch
 * deleting from one drops them all on every instance, since a reset organization re-creates them
 * with the same slugs and ids.
 */
const CACHED_UNDER_ORGANIZATION: ReadonlySet<OrganizationTable> = new Set([
  'affiliates',
  'affiliate_link_aliases',
  'affiliate_link_tokens',
  'clicks',
  'customers',
]);

/** What a deletion deletes: a live organization with its test twin and everything both own, or a test organization's data (its settings kept). */
export type DeletionKind = 'organization' | 'test_data';
export type DeletionStatus = 'queued' | 'running' | 'completed' | 'failed';

/** One deletion's receipt and progress (Migration20270112000000_data_deletions). */
export interface DeletionRecord {
  id: string;
  organization_id: string;
  kind: DeletionKind;
  status: DeletionStatus;
  phase: string | null;
  deleted: Record<string, number>;
  error: string | null;
  requested_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const RECORD_COLUMNS =
  'id, organization_id, kind, status, phase, deleted, error, requested_at, started_at, finished_at';

/** The tables a deletion of this kind deletes from, in ORGANIZATION_TABLES' order. */
export function tablesOf(kind: DeletionKind): OrganizationTable[] {
  return ORGANIZATION_TABLES.filter((t) => kind === 'organization' || !TEST_DATA_KEPT.has(t));
}

const zeroCounts = (kind: DeletionKind): Record<string, number> =>
  Object.fromEntries(tablesOf(kind).map((t) => [t, 0]));

/** The organization's unfinished deletion, if any (the caller holds the organization's row locked). */
function unfinished(db: Db, organizationId: string): Promise<DeletionRecord | undefined> {
  return db.one(
    sql<DeletionRecord>`select ${sql.raw(RECORD_COLUMNS)} from data_deletions where organization_id = ${organizationId} and finished_at is null`,
  );
}

async function insertRecord(db: Db, organizationId: string, kind: DeletionKind): Promise<DeletionRecord> {
  const [row] = await db.rows(
    sql<DeletionRecord>`insert into data_deletions (organization_id, id, kind, deleted) values (${organizationId}, ${newRowId()}, ${kind}, ${JSON.stringify(zeroCounts(kind))}::jsonb) returning ${sql.raw(RECORD_COLUMNS)}`,
  );
  return row;
}

/** The latest deletion of this kind recorded for the organization (the poll routes), or undefined. */
export function latestDeletion(
  db: Db,
  organizationId: string,
  kind: DeletionKind,
): Promise<DeletionRecord | undefined> {
  return db.one(
    sql<DeletionRecord>`select ${sql.raw(RECORD_COLUMNS)} from data_deletions where organization_id = ${organizationId} and kind = ${kind} order by requested_at desc, id desc limit 1`,
  );
}

export function findDeletion(db: Db, organizationId: string, id: string): Promise<DeletionRecord | undefined> {
  return db.one(
    sql<DeletionRecord>`select ${sql.raw(RECORD_COLUMNS)} from data_deletions where organization_id = ${organizationId} and id = ${id}`,
  );
}

export interface RequestedDeletion {
  deletion: DeletionRecord;
  /** True when this request recorded it (false: it joined a deletion already under way). */
  created: boolean;
  /** What this instance's caches drop now (every instance hears of it by NOTIFY on commit). */
  changes: CacheChange[];
}

/**
 * Makes a live organization and its test twin unusable and records their deletion, in the
 * caller's short transaction (the organization rows locked; nothing else): marks both
 * `deletion_requested_at`, revokes every key of both (every instance drops them from its cache on
 * commit), ends the dashboard and portal sessions, disables the affiliates (no link attributes any
 * more) and drops them and the programs from every cache, and inserts the deletion to be run by
 * the job (DeletionRunner). A second request while it runs answers the same deletion; one after a
 * failed deletion records a new one, which goes on from what is left. Undefined when there is no
 * such live organization.
 */
export async function requestOrganizationDeletion(
  db: Db,
  organizationId: string,
): Promise<RequestedDeletion | undefined> {
  const found = await db.rows(
    sql<{
      id: string;
      livemode: boolean;
    }>`select id, livemode from organizations where (id = ${organizationId} and livemode) or live_organization_id = ${organizationId} order by livemode for update`,
  );
  if (!found.some((o) => o.id === organizationId)) return undefined;
  const open = await unfinished(db, organizationId);
  if (open) return { deletion: open, created: false, changes: [] };
  const ids = found.map((o) => o.id);
  // Set where unset, not coalesce(…, now()): Citus refuses now() inside COALESCE or CASE.
  await db.rows(
    sql`update organizations set deletion_requested_at = now() where id = any(${ids}::uuid[]) and deletion_requested_at is null`,
  );
  await db.rows(
    sql`update api_keys set revoked_at = now() where organization_id = any(${ids}::uuid[]) and revoked_at is null`,
  );
  const keys = await db.rows(
    sql<{ key_hash: string }>`select key_hash from api_keys where organization_id = any(${ids}::uuid[])`,
  );
  await db.rows(
    sql`delete from sessions where user_id in (select id from users where organization_id = any(${ids}::uuid[]))`,
  );
  await db.rows(sql`delete from partner_sessions where organization_id = any(${ids}::uuid[])`);
  // Its partners stop attributing (isAttributing: only `active` ones do), so that its snippet,
  // still on the merchant's pages, and its public endpoints record no new click, customer or sale
  // while the job deletes: nothing written meanwhile holds up the deletion of what it refers to.
  const affiliates = await db.rows(
    sql<{
      id: string;
    }>`update affiliates set status = 'disabled' where organization_id = any(${ids}::uuid[]) returning id`,
  );
  const programs = await db.rows(
    sql<{ id: string }>`select id from programs where organization_id = any(${ids}::uuid[])`,
  );
  const cached: CacheChange[] = [
    ...programs.map((p) => ({ kind: 'program' as const, id: p.id })),
    ...affiliates.map((a) => ({ kind: 'affiliate' as const, id: a.id })),
  ];
  const changes: CacheChange[] = [...keys.map((k) => ({ kind: 'api_key' as const, keyHash: k.key_hash })), ...cached];
  await notifyChanges(db, changes);
  return { deletion: await insertRecord(db, organizationId, 'organization'), created: true, changes };
}

/**
 * Records the deletion of a test organization's data (DELETE /api/test-data), in the caller's
 * transaction, or answers the one already under way. Refuses a live organization: this never
 * deletes live data, whatever the caller passes.
 */
export async function requestTestDataDeletion(db: Db, testOrganizationId: string): Promise<RequestedDeletion> {
  const [found] = await db.rows(
    sql<{ livemode: boolean }>`select livemode from organizations where id = ${testOrganizationId} for update`,
  );
  if (!found || found.livemode) throw new Error('requestTestDataDeletion: not a test organization');
  const open = await unfinished(db, testOrganizationId);
  if (open) return { deletion: open, created: false, changes: [] };
  return { deletion: await insertRecord(db, testOrganizationId, 'test_data'), created: true, changes: [] };
}

/** Unfinished deletions (a restarted runner queues them again). */
export function unfinishedDeletions(db: Db): Promise<{ organization_id: string; id: string }[]> {
  return db.rows(sql`select organization_id, id from data_deletions where finished_at is null order by requested_at`);
}

export async function markRunning(
  db: Db,
  d: { organization_id: string; id: string },
): Promise<DeletionRecord | undefined> {
  // started_at set where unset by a statement of its own: Citus refuses now() inside COALESCE.
  await db.rows(
    sql`update data_deletions set started_at = now() where organization_id = ${d.organization_id} and id = ${d.id} and finished_at is null and started_at is null`,
  );
  return db.one(
    sql<DeletionRecord>`update data_deletions set status = 'running' where organization_id = ${d.organization_id} and id = ${d.id} and finished_at is null returning ${sql.raw(RECORD_COLUMNS)}`,
  );
}

export async function markFinished(
  db: Db,
  d: { organization_id: string; id: string },
  status: 'completed' | 'failed',
  error: string | null,
): Promise<void> {
  await db.rows(
    sql`update data_deletions set status = ${status}, phase = null, error = ${error}, finished_at = now() where organization_id = ${d.organization_id} and id = ${d.id} and finished_at is null`,
  );
}

/** The organizations a deletion deletes from, in order (a twin before its live organization: its row refers to it); empty once they are gone. */
export async function targetsOf(db: Db, d: DeletionRecord): Promise<string[]> {
  if (d.kind === 'test_data') {
    const rows = await db.rows(
      sql<{ id: string }>`select id from organizations where id = ${d.organization_id} and not livemode`,
    );
    return rows.map((r) => r.id);
  }
  const rows = await db.rows(
    sql<{
      id: string;
    }>`select id from organizations where id = ${d.organization_id} or live_organization_id = ${d.organization_id} order by livemode`,
  );
  return rows.map((r) => r.id);
}

/** The deletion was finished or removed elsewhere (another runner): this one stops. */
export class DeletionNotRunning extends Error {}

/**
 * Deletes at most `limit` rows of `table` owned by `organizationId`, in one short transaction that
 * also adds the count to the deletion's progress (so the two are never apart, whatever stops the
 * job) after locking the deletion's row: runners of the same deletion take turns, and nothing of
 * any other organization is locked. Programs and affiliates deleted are dropped from every
 * instance's cache on commit, and so is everything cached under the organization when a batch
 * deletes slugs, clicks or customers (CACHED_UNDER_ORGANIZATION) (and answered, for this instance's). Answers the rows deleted.
 */
export async function deleteBatch(
  root: Db,
  d: DeletionRecord,
  organizationId: string,
  table: OrganizationTable,
  limit: number,
): Promise<{ n: number; changes: CacheChange[] }> {
  return root.transaction(async (db) => {
    const [state] = await db.rows(
      sql<{
        status: string;
      }>`select status from data_deletions where organization_id = ${d.organization_id} and id = ${d.id} for update`,
    );
    if (state?.status !== 'running') throw new DeletionNotRunning(`deletion ${d.id} is not running`);
    const owned = ownedRows(table, organizationId);
    const cacheKind = table === 'programs' ? 'program' : table === 'affiliates' ? 'affiliate' : undefined;
    const returning = sql.raw(cacheKind ? 'id' : 'null as id');
    const from = sql.table(table);
    // The rows by their physical position (ctid): one plan for every table, an index on the
    // owner's column to find them, a TID scan to delete them; `owned` again guards the delete.
    // The organization-level tables (keys, people, the organization itself: a few rows each) go in
    // one statement: on Citus they are reference tables, copied to every node, where a ctid names
    // a different row on each copy.
    const gone = (REFERENCE_TABLES as readonly string[]).includes(table)
      ? await db.rows(sql<{ id: string | null }>`delete from ${from} where ${owned} returning ${returning}`)
      : await db.rows(
          sql<{
            id: string | null;
          }>`delete from ${from} where ctid = any(array(select ctid from ${from} where ${owned} limit ${limit})) and ${owned} returning ${returning}`,
        );
    const changes: CacheChange[] = cacheKind ? gone.map((r) => ({ kind: cacheKind, id: r.id! })) : [];
    if (gone.length > 0 && CACHED_UNDER_ORGANIZATION.has(table))
      changes.push({ kind: 'organization_rows', id: organizationId });
    await notifyChanges(db, changes);
    if (gone.length === 0) return { n: 0, changes };
    await db.rows(
      sql`update data_deletions set phase = ${table}, deleted = jsonb_set(deleted, array[${table}::text], to_jsonb(coalesce((deleted ->> ${table})::bigint, 0) + ${gone.length})) where organization_id = ${d.organization_id} and id = ${d.id}`,
    );
    return { n: gone.length, changes };
  });
}

/** A deletion as the API answers it. */
export function deletionView(d: DeletionRecord) {
  return {
    id: d.id,
    organization_id: d.organization_id,
    status: d.status,
    phase: d.phase,
    deleted: Object.fromEntries(Object.entries(d.deleted).map(([t, n]) => [t, Number(n)])),
    error: d.error,
    requested_at: d.requested_at.toISOString(),
    started_at: d.started_at?.toISOString() ?? null,
    finished_at: d.finished_at?.toISOString() ?? null,
  };
}
