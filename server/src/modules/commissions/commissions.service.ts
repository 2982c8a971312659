import type { CommissionEntryType, CommissionStatus } from '@affiliate-attribution/contract';
import type { Commission } from '../../resources.js';
import { assertWholeMinorUnits, roundToMinorUnit } from '../../attribution/money.js';
import { Decimal } from 'decimal.js';
import { NotFoundError } from '../../http/errors.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { decimalToNumber, iso, isoOrNull } from '../../http/serialize.js';
import { approved, effectiveStatus, rejected } from './commission-lifecycle.js';
import type { CommissionRecord, CommissionsRepository } from './commissions.repository.js';
import { newRowId } from '../../db/row-ids.js';

export function toCommissionDto(c: CommissionRecord, now: Date = new Date()): Commission {
  return {
    id: c.id,
    type: c.type,
    status: effectiveStatus({ status: c.status, approvesAt: c.approves_at ?? null }, now),
    amount: decimalToNumber(c.amount),
    currency: c.currency,
    affiliate_id: c.affiliate_id,
    program_id: c.program_id,
    conversion_id: c.conversion_id ?? null,
    customer_id: c.customer_id ?? null,
    description: c.description ?? null,
    rejection_reason: c.rejection_reason ?? null,
    approves_at: isoOrNull(c.approves_at),
    payout_id: c.payout_id ?? null,
    rate: c.rate ? { type: c.rate.type, value: decimalToNumber(c.rate.value), source: c.rate.source } : null,
    hold_reasons: c.hold_reasons ?? [],
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  };
}

export interface CommissionListQuery {
  limit?: number;
  cursor?: string;
  status?: CommissionStatus;
  type?: CommissionEntryType;
  affiliate_id?: string;
  program_id?: string;
  created_after?: string;
  created_before?: string;
}

export interface AdjustmentInput {
  affiliate_id: string;
  amount: number;
  currency?: string;
  description: string;
}

const stateOf = (c: CommissionRecord) => ({
  status: c.status,
  amount: c.amount,
  payoutId: c.payout_id ?? null,
  approvesAt: c.approves_at ?? null,
});

/** The merchant's side of the ledger: listing entries, approving, rejecting, adjusting. */
export class CommissionsService {
  constructor(private readonly commissions: CommissionsRepository) {}

  async list(
    organizationId: string,
    query: CommissionListQuery,
  ): Promise<{ commissions: Commission[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const rows = await this.commissions.page(
      organizationId,
      {
        status: query.status,
        type: query.type,
        affiliate_id: query.affiliate_id,
        program_id: query.program_id,
        created_after: query.created_after ? new Date(query.created_after) : undefined,
        created_before: query.created_before ? new Date(query.created_before) : undefined,
      },
      decodeCursor(query.cursor),
      limit,
    );
    const page = pageOf(rows, limit, (c) => ({ at: c.created_at, id: c.id }));
    const now = new Date();
    return { commissions: page.items.map((c) => toCommissionDto(c, now)), next_cursor: page.next_cursor };
  }

  async get(organizationId: string, id: string): Promise<Commission> {
    return toCommissionDto(await this.commissions.findOwned(organizationId, id));
  }

  async approve(organizationId: string, id: string): Promise<Commission> {
    const row = await this.commissions.updateOwned(organizationId, id, (current) => {
      const now = new Date();
      const outcome = approved(stateOf(current), now);
      if (!outcome.changed) return undefined;
      // Already approved by the passing of its hold: it was approved then, not now.
      const approvedAt =
        effectiveStatus(stateOf(current), now) === 'approved' && current.approves_at ? current.approves_at : now;
      return { status: 'approved', approved_at: approvedAt };
    });
    return toCommissionDto(row);
  }

  async reject(organizationId: string, id: string, reason: string | undefined): Promise<Commission> {
    const row = await this.commissions.updateOwned(organizationId, id, (current, clawbacks) => {
      const outcome = rejected(stateOf(current), new Date(), clawbacks.map(stateOf));
      return outcome.changed ? { status: 'rejected', rejection_reason: reason ?? null } : undefined;
    });
    return toCommissionDto(row);
  }

  /** A manual entry, approved at once: the next payout carries it. */
  async adjust(organizationId: string, input: AdjustmentInput): Promise<Commission> {
    const affiliate = await this.commissions.findAffiliate(organizationId, input.affiliate_id);
    if (!affiliate) throw new NotFoundError('Affiliate not found');
    const currency = (input.currency ?? affiliate.currency).toUpperCase();
    assertWholeMinorUnits('amount', input.amount, currency);
    const now = new Date();
    const row = await this.commissions.insert({
      id: newRowId(),
      organization_id: organizationId,
      type: 'adjustment',
      status: 'approved',
      amount: roundToMinorUnit(new Decimal(input.amount), currency),
      currency,
      affiliate_id: affiliate.id,
      program_id: affiliate.program_id,
      conversion_id: null,
      customer_id: null,
      description: input.description,
      rejection_reason: null,
      approves_at: null,
      approved_at: now,
      created_at: now,
      updated_at: now,
    });
    return toCommissionDto(row, now);
  }
}
