import type { PayoutStatus } from '@affiliate-attribution/contract';
import type { Payout } from '../../resources.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { decimalToNumber, iso, isoOrNull } from '../../http/serialize.js';
import { MAX_ROWS_PER_FILE, payoutFile, type PayoutFileFormat } from './payout-files.js';
import type { PayoutRecord, PayoutsRepository } from './payouts.repository.js';

export function toPayoutDto(p: PayoutRecord): Payout {
  return {
    id: p.id,
    affiliate_id: p.affiliate_id,
    program_id: p.program_id,
    currency: p.currency,
    amount: decimalToNumber(p.amount),
    status: p.status,
    commission_count: p.commission_count,
    reference: p.reference ?? null,
    created_at: iso(p.created_at),
    paid_at: isoOrNull(p.paid_at),
    canceled_at: isoOrNull(p.canceled_at),
  };
}

export interface PayoutListQuery {
  limit?: number;
  cursor?: string;
  status?: PayoutStatus;
  affiliate_id?: string;
  program_id?: string;
}

export interface PayoutExportQuery {
  status?: PayoutStatus;
  format?: PayoutFileFormat;
  program_id?: string;
  currency?: string;
}

/** Paying the ledger: gathering approved entries into payouts, settling them, exporting batch files. */
export class PayoutsService {
  constructor(private readonly payouts: PayoutsRepository) {}

  async create(organizationId: string, input: { program_id?: string; currency?: string; approved_before?: string }): Promise<Payout[]> {
    const rows = await this.payouts.create(organizationId, {
      program_id: input.program_id,
      currency: input.currency?.toUpperCase(),
      approved_before: input.approved_before ? new Date(input.approved_before) : undefined,
    });
    return rows.map(toPayoutDto);
  }

  async list(organizationId: string, query: PayoutListQuery): Promise<{ payouts: Payout[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const rows = await this.payouts.page(organizationId, { status: query.status, affiliate_id: query.affiliate_id, program_id: query.program_id }, decodeCursor(query.cursor), limit);
    const page = pageOf(rows, limit, (p) => ({ at: p.created_at, id: p.id }));
    return { payouts: page.items.map(toPayoutDto), next_cursor: page.next_cursor };
  }

  async get(organizationId: string, id: string): Promise<Payout> {
    return toPayoutDto(await this.payouts.findOwned(organizationId, id));
  }

  async markPaid(organizationId: string, id: string, reference: string | undefined): Promise<Payout> {
    return toPayoutDto(await this.payouts.markPaid(organizationId, id, reference));
  }

  async cancel(organizationId: string, id: string): Promise<Payout> {
    return toPayoutDto(await this.payouts.cancel(organizationId, id));
  }

  /** The batch file of the matching payouts (payout-files.ts); by default the pending ones, as plain CSV. */
  async export(organizationId: string, query: PayoutExportQuery): Promise<string> {
    const format = query.format ?? 'csv';
    // One row past the format's limit, so that too many is refused rather than cut short.
    const rows = await this.payouts.fileRows(
      organizationId,
      { status: query.status ?? 'pending', program_id: query.program_id, currency: query.currency?.toUpperCase() },
      MAX_ROWS_PER_FILE[format] + 1,
    );
    return payoutFile(
      format,
      rows.map((r) => ({ ...r, created_at: iso(r.created_at), paid_at: isoOrNull(r.paid_at) })),
    );
  }
}
