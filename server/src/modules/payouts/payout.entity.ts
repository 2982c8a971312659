import { defineEntity } from '@mikro-orm/core';

/** Approved commissions of one affiliate, program and currency, paid together (shared/spec/ledger.md, "Payouts"). */
export const PayoutEntity = defineEntity({
  name: 'Payout',
  tableName: 'payouts',
  properties: (p) => ({
    id: p.uuid().primary(),
    organization_id: p.uuid(),
    affiliate_id: p.uuid(),
    program_id: p.uuid(),
    currency: p.string(),
    amount: p.decimal('string'),
    status: p.enum(['pending', 'paid', 'canceled'] as const),
    commission_count: p.integer(),
    reference: p.text().nullable(),
    created_at: p.datetime().defaultRaw('now()'),
    paid_at: p.datetime().nullable(),
    canceled_at: p.datetime().nullable(),
  }),
});
