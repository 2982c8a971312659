import { ForbiddenError, NotFoundError } from '../http/errors.js';
import { isUuid } from '../http/serialize.js';
import { sql, type RawBuilder } from 'kysely';
import type { Db } from './sql.js';

/** A tenant table whose rows a merchant addresses in a path: by the service's UUID, and for some also by an id it chose. */
export interface OwnedTable {
  table: 'customers' | 'conversions' | 'programs' | 'affiliates' | 'commissions' | 'payouts' | 'coupons';
  /** The merchant's own id column (unique per organization, indexed on its own too); none: addressed by UUID only. */
  merchantIdColumn?: 'customer_id' | 'external_id';
  /** The 404 message: "Customer not found". */
  notFound: string;
  /**
   * More columns of the found row, computed in the same statement (`t` is the row; `organization`
   * the caller's organization as SQL, for the subquery to name it: on Citus a correlated
   * `t.organization_id` would make the statement every shard's): an affiliate's aliases, read with
   * it so that a read by id stays one statement.
   */
  extraColumns?: (organization: string) => string;
}

/**
 * "Another organization's row" in the ownership rule: a row of `alias` whose organization is not
 * the caller's (`organizationId`) in either mode. A live organization and its
 * test twin (Migration20270105000000_test_mode) are one account: a test row seen with a live key
 * (or the reverse) is not another merchant's, it is simply not there (404, never 403: the
 * spec's test mode). Used in the fallback branch only, when the caller's own organization has no
 * such row, so it costs the found rows nothing.
 */
export function ofAnotherAccount(alias: string, organizationId: string): RawBuilder<unknown> {
  return sql`not exists (select 1 from organizations row_org join organizations caller on coalesce(row_org.live_organization_id, row_org.id) = coalesce(caller.live_organization_id, caller.id) where row_org.id = ${sql.ref(`${alias}.organization_id`)} and caller.id = ${organizationId})`;
}

/**
 * The ownership rule, the same for every row a path names (the spec's): the row of this
 * organization addressed by `id` (the service's UUID, else the merchant's id where the table has
 * one); found only in another organization: 403; nowhere, or only in this organization's other
 * mode (ofAnotherAccount): 404 with the table's message. An id that cannot name a row (not a
 * UUID, and no merchant id column) is 404 without a statement.
 *
 * The row is first looked for in the caller's organization alone: on Citus that statement is one
 * shard's, and it answers every request that names its own row. Only when it finds nothing is the
 * rule decided, by one statement, so one snapshot: the own-organization lookup again and the
 * anywhere lookup see the same rows. (Two statements answered a false 403 for a row committed
 * between them: not visible to the first, visible to the second.) Its second branch runs only when
 * the first finds nothing: the LIMIT above the UNION ALL stops at the first row. A UUID that is
 * also another row's merchant id prefers the UUID match.
 */
export async function findOwnedRow<R>(db: Db, spec: OwnedTable, organizationId: string, id: string): Promise<R> {
  const { table, merchantIdColumn } = spec;
  const byUuid = isUuid(id);
  if (!byUuid && !merchantIdColumn) throw new NotFoundError(spec.notFound);
  const merchantId = merchantIdColumn && sql.ref(merchantIdColumn);
  const match = !merchantId
    ? sql`id = ${id}::uuid`
    : byUuid
      ? sql`(id = ${id}::uuid or ${merchantId} = ${id})`
      : sql`${merchantId} = ${id}`;
  const preferUuid = byUuid && merchantIdColumn ? sql`order by (id = ${id}::uuid) desc ` : sql``;
  // A UUID (the caller's organization, from its key or session) as a literal for extraColumns.
  if (!isUuid(organizationId)) throw new NotFoundError(spec.notFound);
  const extra = sql.raw(spec.extraColumns ? `, ${spec.extraColumns(`'${organizationId}'::uuid`)}` : '');
  const from = sql.table(table);
  const own = () =>
    db.one(
      sql<
        Record<string, unknown>
      >`select t.*${extra} from ${from} t where organization_id = ${organizationId} and ${match} ${preferUuid}limit 1`,
    );
  const found = await own();
  if (found) return found as R;
  // The rule's statement answers only whose the row is (the row itself, found in the caller's
  // organization after all, is read again): on Citus its anywhere branch reads every shard.
  const rule = await db.one(
    sql<{
      owned_by_caller: boolean;
    }>`(select true as owned_by_caller from ${from} t where organization_id = ${organizationId} and ${match} limit 1)
      union all
      (select false from ${from} t where ${match} and ${ofAnotherAccount('t', organizationId)} limit 1)
      limit 1`,
  );
  if (!rule) throw new NotFoundError(spec.notFound);
  if (!rule.owned_by_caller) throw new ForbiddenError();
  const committed = await own();
  if (!committed) throw new NotFoundError(spec.notFound);
  return committed as R;
}

/** Conversions by UUID or external_id (the conversions module's; kept here until it has a repository). */
export const CONVERSIONS_BY_MERCHANT_ID: OwnedTable = {
  table: 'conversions',
  merchantIdColumn: 'external_id',
  notFound: 'Conversion not found',
};
