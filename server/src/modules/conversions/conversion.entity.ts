import { defineEntity } from '@mikro-orm/core';

export const ConversionEntity = defineEntity({
  name: 'Conversion',
  tableName: 'conversions',
  properties: (p) => ({
    id: p.uuid().primary(),
    organization_id: p.uuid(),
    external_id: p.text(),
    amount: p.decimal('string'),
    currency: p.string(),
    kind: p.enum(['initial', 'recurring'] as const),
    commission_amount: p.decimal('string'),
    customer_id: p.text().nullable(),
    affiliate_id: p.uuid(),
    program_id: p.uuid(),
    click_id: p.uuid().nullable(),
    status: p.enum(['approved', 'reversed'] as const).default('approved'),
    refunded_amount: p.decimal('string').default('0'),
    gross_commission_amount: p.decimal('string').nullable(),
    reversed_at: p.datetime().nullable(),
    occurred_at: p.datetime(),
    created_at: p.datetime().defaultRaw('now()'),
  }),
});
