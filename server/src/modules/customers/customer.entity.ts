import { defineEntity } from '@mikro-orm/core';

export const CustomerEntity = defineEntity({
  name: 'Customer',
  tableName: 'customers',
  properties: (p) => ({
    id: p.uuid().primary(),
    organization_id: p.uuid(),
    customer_id: p.text(),
    status: p.enum(['trial', 'active', 'capped', 'canceled'] as const),
    affiliate_id: p.uuid(),
    program_id: p.uuid(),
    click_id: p.uuid().nullable(),
    email: p.text().nullable(),
    name: p.text().nullable(),
    first_conversion_at: p.datetime().nullable(),
    /** Paid conversions counted while the program caps by count (commission_max_conversions). */
    paid_conversions: p.integer().default(0),
    created_at: p.datetime().defaultRaw('now()'),
    updated_at: p.datetime().defaultRaw('now()'),
  }),
});
