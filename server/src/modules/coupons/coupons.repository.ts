import type { MikroORM } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { pageInCreationOrder } from '../../db/created-order.js';
import { kyselyOf, readFromReplica, type NewRow, type StoredRow } from '../../db/database.js';
import { findOwnedRow, type OwnedTable } from '../../db/owned-row.js';
import { Db } from '../../db/sql.js';
import type { CursorPosition } from '../../http/pagination.js';

export type CouponRecord = StoredRow<'coupons'>;

const COUPONS_BY_ID: OwnedTable = { table: 'coupons', notFound: 'Coupon not found' };

/** The coupons module's only way to the database. Codes are compared lower-cased (the unique index coupons_code_unique). */
export class CouponsRepository {
  constructor(private readonly orm: MikroORM) {}

  /** The inserted coupon; a code taken in any case fails on coupons_code_unique. */
  insert(row: NewRow<'coupons'>): Promise<CouponRecord> {
    return kyselyOf(this.orm).insertInto('coupons').values(row).returningAll().executeTakeFirstOrThrow();
  }

  page(
    organizationId: string,
    affiliateId: string | undefined,
    after: CursorPosition | undefined,
    limit: number,
  ): Promise<CouponRecord[]> {
    return readFromReplica(this.orm, 'GET /api/coupons', (source) => {
      let query = kyselyOf(source).selectFrom('coupons').selectAll().where('organization_id', '=', organizationId);
      if (affiliateId) query = query.where('affiliate_id', '=', affiliateId);
      return pageInCreationOrder(query, after, limit).execute();
    });
  }

  /** The ownership rule (db/owned-row.ts): 403 for another organization's coupon, 404 for none. */
  findOwned(organizationId: string, id: string): Promise<CouponRecord> {
    return findOwnedRow<CouponRecord>(Db.of(this.orm), COUPONS_BY_ID, organizationId, id);
  }

  async delete(organizationId: string, id: string): Promise<void> {
    await kyselyOf(this.orm)
      .deleteFrom('coupons')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
  }

  /** What attribution needs of a code (modules/referrals/attribution-resolver.ts): its affiliate and program. */
  findByCode(organizationId: string, code: string): Promise<{ affiliate_id: string; program_id: string } | undefined> {
    return kyselyOf(this.orm)
      .selectFrom('coupons')
      .select(['affiliate_id', 'program_id'])
      .where('organization_id', '=', organizationId)
      .where(sql`lower(code)`, '=', code.trim().toLowerCase())
      .executeTakeFirst();
  }
}
