import { defineEntity } from '@mikro-orm/core';
import type { CommissionTiers, FraudRules } from '../../attribution/program-rules.js';

export const ProgramEntity = defineEntity({
  name: 'Program',
  tableName: 'programs',
  properties: (p) => ({
    id: p.uuid().primary(),
    organization_id: p.uuid(),
    name: p.text(),
    commission_type: p.enum(['percent', 'flat'] as const),
    commission_value: p.decimal('string'),
    click_window_days: p.integer(),
    commission_window_months: p.integer().nullable(),
    currency: p.string(),
    hold_days: p.integer().default(30),
    auto_approve: p.boolean().default(true),
    minimum_payout: p.decimal('string').default('0'),
    attribution_model: p.enum(['last_click', 'first_click'] as const).default('last_click'),
    commission_max_conversions: p.integer().nullable(),
    commission_tiers: p.json<CommissionTiers>().nullable(),
    fraud_rules: p.json<FraudRules>(),
    signup: p.enum(['open', 'approval', 'closed'] as const).default('approval'),
    terms: p.text().nullable(),
    website_url: p.text().nullable(),
    /** No payout for an affiliate whose tax form is not accepted (modules/tax-forms/payout-hold.ts). */
    require_tax_form: p.boolean().default(false),
    created_at: p.datetime().defaultRaw('now()'),
    updated_at: p.datetime().defaultRaw('now()'),
  }),
});
