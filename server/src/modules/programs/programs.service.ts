import type { Program } from '../../resources.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { decimalToNumber, iso } from '../../http/serialize.js';
import type { AttributionResolver } from '../referrals/attribution-resolver.js';
import { assertCommissionRule } from '../../attribution/commission.js';
import { assertWholeMinorUnits } from '../../attribution/money.js';
import {
  DEFAULT_FRAUD_RULES,
  withFraudRules,
  type AttributionModel,
  type CommissionTiers,
  type FraudRules,
} from '../../attribution/program-rules.js';
import { BadRequestError } from '../../http/errors.js';
import type { ProgramRecord, ProgramsRepository } from './programs.repository.js';
import { newRowId } from '../../db/row-ids.js';

export const PROGRAM_DEFAULTS = {
  commission_type: 'percent',
  click_window_days: 60,
  commission_window_months: null,
  currency: 'USD',
  hold_days: 30,
  auto_approve: true,
  minimum_payout: 0,
  signup: 'approval',
} as const;

export interface ProgramInput {
  name: string;
  commission_type?: 'percent' | 'flat';
  commission_value: number;
  click_window_days?: number;
  commission_window_months?: number | null;
  currency?: string;
  hold_days?: number;
  auto_approve?: boolean;
  minimum_payout?: number;
  attribution_model?: AttributionModel;
  commission_max_conversions?: number | null;
  commission_tiers?: CommissionTiers | null;
  fraud_rules?: Partial<FraudRules>;
  signup?: 'open' | 'approval' | 'closed';
  terms?: string | null;
  website_url?: string | null;
  require_tax_form?: boolean;
}

/** Every tier's rate obeys the commission rule (a percent at most 100); two tiers never start at the same value. */
function assertTiers(commissionType: 'percent' | 'flat', tiers: CommissionTiers | null | undefined): void {
  if (!tiers) return;
  tiers.tiers.forEach((tier, i) => {
    try {
      assertCommissionRule({ commission_type: commissionType, commission_value: tier.commission_value });
    } catch {
      throw new BadRequestError(`commission_tiers.tiers.${i}.commission_value: a percent commission is at most 100`);
    }
  });
  if (new Set(tiers.tiers.map((t) => t.from)).size !== tiers.tiers.length)
    throw new BadRequestError('commission_tiers.tiers: two tiers start at the same `from`');
}

export function toProgramDto(p: ProgramRecord): Program {
  return {
    id: p.id,
    name: p.name,
    commission_type: p.commission_type,
    commission_value: decimalToNumber(p.commission_value),
    click_window_days: p.click_window_days,
    commission_window_months: p.commission_window_months ?? null,
    currency: p.currency,
    hold_days: p.hold_days,
    auto_approve: p.auto_approve,
    minimum_payout: decimalToNumber(p.minimum_payout),
    attribution_model: p.attribution_model,
    commission_max_conversions: p.commission_max_conversions ?? null,
    commission_tiers: p.commission_tiers ?? null,
    fraud_rules: withFraudRules(p.fraud_rules, undefined),
    signup: p.signup,
    terms: p.terms ?? null,
    website_url: p.website_url ?? null,
    require_tax_form: p.require_tax_form,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

export class ProgramsService {
  constructor(
    private readonly programs: ProgramsRepository,
    private readonly resolver: AttributionResolver,
  ) {}

  async create(organizationId: string, input: ProgramInput): Promise<Program> {
    const now = new Date();
    const commissionType = input.commission_type ?? PROGRAM_DEFAULTS.commission_type;
    assertCommissionRule({ commission_type: commissionType, commission_value: input.commission_value });
    const currency = (input.currency ?? PROGRAM_DEFAULTS.currency).toUpperCase();
    assertWholeMinorUnits('minimum_payout', input.minimum_payout ?? 0, currency);
    assertTiers(commissionType, input.commission_tiers);
    const program = await this.programs.insert({
      id: newRowId(),
      organization_id: organizationId,
      name: input.name,
      commission_type: commissionType,
      commission_value: String(input.commission_value),
      click_window_days: input.click_window_days ?? PROGRAM_DEFAULTS.click_window_days,
      commission_window_months: input.commission_window_months ?? PROGRAM_DEFAULTS.commission_window_months,
      currency,
      hold_days: input.hold_days ?? PROGRAM_DEFAULTS.hold_days,
      auto_approve: input.auto_approve ?? PROGRAM_DEFAULTS.auto_approve,
      minimum_payout: String(input.minimum_payout ?? PROGRAM_DEFAULTS.minimum_payout),
      attribution_model: input.attribution_model ?? 'last_click',
      commission_max_conversions: input.commission_max_conversions ?? null,
      commission_tiers: input.commission_tiers ?? null,
      fraud_rules: withFraudRules(DEFAULT_FRAUD_RULES, input.fraud_rules),
      signup: input.signup ?? PROGRAM_DEFAULTS.signup,
      terms: input.terms ?? null,
      website_url: input.website_url ?? null,
      require_tax_form: input.require_tax_form ?? false,
      created_at: now,
      updated_at: now,
    });
    return toProgramDto(program);
  }

  async list(
    organizationId: string,
    query: { limit?: number; cursor?: string },
  ): Promise<{ programs: Program[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const rows = await this.programs.page(organizationId, decodeCursor(query.cursor), limit);
    const page = pageOf(rows, limit, (p) => ({ at: p.created_at, id: p.id }));
    return { programs: page.items.map(toProgramDto), next_cursor: page.next_cursor };
  }

  /** 404 when no such program exists anywhere, 403 when it belongs to another organization. */
  async get(organizationId: string, id: string): Promise<Program> {
    return toProgramDto(await this.programs.findOwned(organizationId, id));
  }

  /**
   * The stored program with the given fields changed, checked against the commission rule as a
   * whole. Every instance caches program rules (attribution/cache.ts): the repository notifies
   * every instance in the update's own transaction; this one drops its copy at once, before
   * answering.
   */
  async update(organizationId: string, id: string, input: Partial<ProgramInput>): Promise<Program> {
    const program = await this.programs.updateOwned(organizationId, id, (current) => {
      const next = {
        name: input.name ?? current.name,
        commission_type: input.commission_type ?? current.commission_type,
        commission_value:
          input.commission_value !== undefined ? String(input.commission_value) : current.commission_value,
        click_window_days: input.click_window_days ?? current.click_window_days,
        commission_window_months:
          input.commission_window_months !== undefined
            ? input.commission_window_months
            : current.commission_window_months,
        currency: input.currency !== undefined ? input.currency.toUpperCase() : current.currency,
        hold_days: input.hold_days ?? current.hold_days,
        auto_approve: input.auto_approve ?? current.auto_approve,
        minimum_payout: input.minimum_payout !== undefined ? String(input.minimum_payout) : current.minimum_payout,
        attribution_model: input.attribution_model ?? current.attribution_model,
        commission_max_conversions:
          input.commission_max_conversions !== undefined
            ? input.commission_max_conversions
            : (current.commission_max_conversions ?? null),
        commission_tiers:
          input.commission_tiers !== undefined ? input.commission_tiers : (current.commission_tiers ?? null),
        fraud_rules: withFraudRules(current.fraud_rules, input.fraud_rules),
        signup: input.signup ?? current.signup,
        terms: input.terms !== undefined ? input.terms : current.terms,
        website_url: input.website_url !== undefined ? input.website_url : current.website_url,
        require_tax_form: input.require_tax_form ?? current.require_tax_form,
        updated_at: new Date(),
      };
      assertCommissionRule(next);
      assertTiers(next.commission_type, next.commission_tiers);
      assertWholeMinorUnits('minimum_payout', next.minimum_payout, next.currency);
      return next;
    });
    this.resolver.forgetProgram(program.id);
    return toProgramDto(program);
  }
}
