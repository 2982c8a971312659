import { ForbiddenError, NotFoundError } from '../http/errors.js';
import { isUuid } from '../http/serialize.js';
import type { Sql } from './sql.js';

/** A tenant table whose rows are addressed by the service's UUID or by an id the merchant chose. */
export interface MerchantAddressedTable {
  table: 'customers' | 'conversions';
  /** The merchant's own id column (unique per organization, indexed on its own too). */
  merchantIdColumn: 'customer_id' | 'external_id';
  /** The 404 message: "Customer not found". */
  notFound: string;
}

/**
 * The row of this organization addressed by `id` (the service's UUID, else the merchant's id);
 * found only in another organization: 403 (the spec's rule); nowhere: 404.
 *
 * One statement, so one snapshot: the own-organization lookup and the anywhere lookup see the same
 * rows. (Two statements answered a false 403 for a row committed between them: not visible to the
 * first, visible to the second.) The second branch runs only when the first finds nothing: the
 * LIMIT above the UNION ALL stops at the first row. A UUID that is also another row's merchant id
 * prefers the UUID match.
 */
export async function findOwnedRow<T>(sql: Sql, spec: MerchantAddressedTable, organizationId: string, id: string): Promise<T> {
  const { table, merchantIdColumn } = spec;
  const byUuid = isUuid(id);
  const match = byUuid ? `(id = ?::uuid or ${merchantIdColumn} = ?)` : `${merchantIdColumn} = ?`;
  const matchParams = byUuid ? [id, id] : [id];
  const preferUuid = byUuid ? `order by (id = ?::uuid) desc ` : '';
  const row = await sql.one<T & { owned_by_caller: boolean }>(
    `(select t.*, true as owned_by_caller from ${table} t where organization_id = ? and ${match} ${preferUuid}limit 1)
      union all
      (select t.*, false from ${table} t where ${match} limit 1)
      limit 1`,
    [organizationId, ...matchParams, ...(byUuid ? [id] : []), ...matchParams],
  );
  if (!row) throw new NotFoundError(spec.notFound);
  if (!row.owned_by_caller) throw new ForbiddenError();
  const { owned_by_caller: _owned, ...own } = row;
  return own as T;
}

export const CUSTOMERS_BY_MERCHANT_ID: MerchantAddressedTable = { table: 'customers', merchantIdColumn: 'customer_id', notFound: 'Customer not found' };
export const CONVERSIONS_BY_MERCHANT_ID: MerchantAddressedTable = { table: 'conversions', merchantIdColumn: 'external_id', notFound: 'Conversion not found' };
