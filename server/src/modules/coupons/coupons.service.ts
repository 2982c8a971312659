import type { Coupon } from '../../resources.js';
import { isUniqueViolation } from '../../db/sql.js';
import { ConflictError, NotFoundError } from '../../http/errors.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { iso, isUuid } from '../../http/serialize.js';
import type { AffiliatesRepository } from '../affiliates/affiliates.repository.js';
import type { CouponRecord, CouponsRepository } from './coupons.repository.js';
import { newRowId } from '../../db/row-ids.js';

export const toCouponDto = (c: CouponRecord): Coupon => ({
  id: c.id,
  code: c.code,
  affiliate_id: c.affiliate_id,
  program_id: c.program_id,
  created_at: iso(c.created_at),
});

/** Promotion codes affiliates own (attribution by coupon: attribution/resolver.ts decides, modules/referrals/attribution-resolver.ts reads). */
export class CouponsService {
  constructor(
    private readonly coupons: CouponsRepository,
    private readonly affiliates: Pick<AffiliatesRepository, 'findOwned'>,
  ) {}

  /** 404 for an affiliate not of this organization; 409 for a code taken in any case. */
  async create(organizationId: string, input: { code: string; affiliate_id: string }): Promise<Coupon> {
    if (!isUuid(input.affiliate_id)) throw new NotFoundError('Affiliate not found');
    const affiliate = await this.affiliates.findOwned(organizationId, input.affiliate_id).catch(() => undefined);
    if (!affiliate) throw new NotFoundError('Affiliate not found');
    try {
      const row = await this.coupons.insert({
        id: newRowId(),
        organization_id: organizationId,
        code: input.code.trim(),
        affiliate_id: affiliate.id,
        program_id: affiliate.program_id,
        created_at: new Date(),
      });
      return toCouponDto(row);
    } catch (err) {
      if (isUniqueViolation(err, 'coupons_code_unique'))
        throw new ConflictError(`code: "${input.code.trim()}" is already taken`);
      throw err;
    }
  }

  async list(
    organizationId: string,
    query: { limit?: number; cursor?: string; affiliate_id?: string },
  ): Promise<{ coupons: Coupon[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const rows = await this.coupons.page(organizationId, query.affiliate_id, decodeCursor(query.cursor), limit);
    const page = pageOf(rows, limit, (c) => ({ at: c.created_at, id: c.id }));
    return { coupons: page.items.map(toCouponDto), next_cursor: page.next_cursor };
  }

  async delete(organizationId: string, id: string): Promise<Coupon> {
    const coupon = await this.coupons.findOwned(organizationId, id);
    await this.coupons.delete(organizationId, coupon.id);
    return toCouponDto(coupon);
  }
}
