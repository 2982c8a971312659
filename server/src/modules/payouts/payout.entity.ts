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
    status: p.enum(['pending', 'processing', 'paid', 'failed', 'canceled'] as const),
    /** The rail it is paid by: `manual` (the export files) or the provider it was sent through. */
    method: p.enum(['manual', 'paypal', 'stripe', 'wise'] as const).default('manual'),
    /** The idempotency key derived from the payout, stored before the provider is called (payout-sender.ts). */
    send_key: p.text().nullable(),
    provider_reference: p.text().nullable(),
    failure_reason: p.text().nullable(),
    sent_at: p.datetime().nullable(),
    failed_at: p.datetime().nullable(),
    simulated: p.boolean().default(false),
    /** A failed payout's retry (POST /api/payouts/{id}/retry): the payout its commissions went out in. */
    retried_by_payout_id: p.uuid().nullable(),
    commission_count: p.integer(),
    reference: p.text().nullable(),
    created_at: p.datetime().defaultRaw('now()'),
    paid_at: p.datetime().nullable(),
    canceled_at: p.datetime().nullable(),
  }),
});
