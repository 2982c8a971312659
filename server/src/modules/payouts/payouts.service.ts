import type { HeldPayout, PayoutMethod, PayoutStatus } from '@affiliate-attribution/contract';
import type { Payout } from '../../resources.js';
import { holdMessage } from '../tax-forms/tax-form-rules.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { decimalToNumber, iso, isoOrNull } from '../../http/serialize.js';
import { MAX_ROWS_PER_FILE, payoutFile, type PayoutFileFormat } from './payout-files.js';
import type { PayoutRecord, PayoutsRepository } from './payouts.repository.js';
import type { PayoutSender } from './payout-sender.js';
import { ConflictError } from '../../http/errors.js';

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
    method: p.method ?? 'manual',
    provider_reference: p.provider_reference ?? null,
    failure_reason: p.failure_reason ?? null,
    sent_at: isoOrNull(p.sent_at ?? null),
    simulated: p.simulated ?? false,
    created_at: iso(p.created_at),
    paid_at: isoOrNull(p.paid_at),
    canceled_at: isoOrNull(p.canceled_at),
    failed_at: isoOrNull(p.failed_at ?? null),
    retried_by_payout_id: p.retried_by_payout_id ?? null,
  };
}

export interface PayoutListQuery {
  limit?: number;
  cursor?: string;
  status?: PayoutStatus;
  method?: PayoutMethod;
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

  /** The payouts created, and those a program's `require_tax_form` held (their commissions stay approved). */
  async create(
    organizationId: string,
    input: { program_id?: string; currency?: string; approved_before?: string },
  ): Promise<{ payouts: Payout[]; held: HeldPayout[] }> {
    const { created, held } = await this.payouts.create(organizationId, {
      program_id: input.program_id,
      currency: input.currency?.toUpperCase(),
      approved_before: input.approved_before ? new Date(input.approved_before) : undefined,
    });
    return {
      payouts: created.map(toPayoutDto),
      held: held.map((h) => ({ ...h, amount: decimalToNumber(h.amount), message: holdMessage(h.reason) })),
    };
  }

  async list(
    organizationId: string,
    query: PayoutListQuery,
  ): Promise<{ payouts: Payout[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const rows = await this.payouts.page(
      organizationId,
      { status: query.status, method: query.method, affiliate_id: query.affiliate_id, program_id: query.program_id },
      decodeCursor(query.cursor),
      limit,
    );
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

  /**
   * A failed payout's commissions (approved again) in a new payout of the same affiliate, program
   * and currency, sent at once. The failed payout stays as the record and names the new one
   * (`retried_by_payout_id`); retried again, it answers 409 naming it.
   */
  async retry(organizationId: string, id: string, sender: PayoutSender): Promise<Payout> {
    const found = await this.payouts.findOwned(organizationId, id);
    if (found.status !== 'failed')
      throw new ConflictError(`A ${found.status} payout cannot be retried: only a failed one`);
    const {
      created: [next],
      held,
      retried,
    } = await this.payouts.retry(organizationId, found);
    if (retried?.retried_by_payout_id)
      throw new ConflictError(
        `Payout ${id} was retried already: its commissions went into payout ${retried.retried_by_payout_id}`,
      );
    if (retried) throw new ConflictError(`A ${retried.status} payout cannot be retried: only a failed one`);
    // The program's require_tax_form holds the new payout (tax-forms/tax-form-rules.ts): say so.
    if (!next && held[0])
      throw new ConflictError(
        `${holdMessage(held[0].reason)}: the program requires an accepted tax form before paying this affiliate`,
      );
    if (!next)
      throw new ConflictError(
        "Nothing to pay: the failed payout's commissions were paid, rejected or taken by another payout meanwhile",
      );
    const [sent] = await sender.send(organizationId, { payout_ids: [next.id] });
    return sent;
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
