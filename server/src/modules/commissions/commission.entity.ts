import { defineEntity } from '@mikro-orm/core';
import type { AppliedRate } from '../../attribution/program-rules.js';
import type { HoldReason } from '../../charges/fraud.js';

/** One ledger entry (shared/spec/ledger.md, "Commissions"); the rules are in commission-lifecycle.ts. */
export const CommissionEntity = defineEntity({
  name: 'Commission',
  tableName: 'commissions',
  properties: (p) => ({
    id: p.uuid().primary(),
    organization_id: p.uuid(),
    type: p.enum(['sale', 'clawback', 'adjustment'] as const),
    status: p.enum(['pending', 'approved', 'paid', 'reversed', 'rejected', 'on_hold'] as const),
    amount: p.decimal('string'),
    currency: p.string(),
    affiliate_id: p.uuid(),
    program_id: p.uuid(),
    conversion_id: p.uuid().nullable(),
    customer_id: p.text().nullable(),
    description: p.text().nullable(),
    rejection_reason: p.text().nullable(),
    approves_at: p.datetime().nullable(),
    approved_at: p.datetime().nullable(),
    /** A sale's rate: { type, value, source } (attribution/program-rules.ts). */
    rate: p.json<AppliedRate>().nullable(),
    /** Why an entry is on_hold: [{ rule, detail }] (charges/fraud.ts). */
    hold_reasons: p.json<HoldReason[]>().nullable(),
    created_at: p.datetime().defaultRaw('now()'),
    updated_at: p.datetime().defaultRaw('now()'),
  }),
});
