import { defineEntity } from '@mikro-orm/core';

/**
 * The refunds reported for a conversion, one row per report key (attribution/refunds.ts): `total`
 * for the charge's running total, `refund:<id>` for an identified refund; each keeps the largest
 * amount reported under it.
 */
export const ConversionRefundEntity = defineEntity({
  name: 'ConversionRefund',
  tableName: 'conversion_refunds',
  properties: (p) => ({
    organization_id: p.uuid().primary(),
    conversion_id: p.uuid().primary(),
    refund_key: p.text().primary(),
    amount: p.decimal('string'),
    created_at: p.datetime().defaultRaw('now()'),
    updated_at: p.datetime().defaultRaw('now()'),
  }),
});
