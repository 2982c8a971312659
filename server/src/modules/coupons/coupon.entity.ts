import { defineEntity } from '@mikro-orm/core';

/** A promotion code an affiliate owns: a sale paid with it is attributed to the affiliate (weakest input). */
export const CouponEntity = defineEntity({
  name: 'Coupon',
  tableName: 'coupons',
  properties: (p) => ({
    id: p.uuid().primary(),
    organization_id: p.uuid(),
    code: p.text(),
    affiliate_id: p.uuid(),
    program_id: p.uuid(),
    created_at: p.datetime().defaultRaw('now()'),
  }),
});
