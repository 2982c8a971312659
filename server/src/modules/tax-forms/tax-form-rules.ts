import type { PayoutHold, PayoutHoldReason, TaxForm } from '@affiliate-attribution/contract';
import { iso, isoOrNull } from '../../http/serialize.js';

/** An affiliate's tax form columns (affiliates.tax_form_*; Migration20270108000000_tax_forms). */
export interface TaxFormColumns {
  tax_form_status?: 'submitted' | 'accepted' | 'rejected' | null;
  tax_form_kind?: 'w9' | 'w8ben' | 'w8bene' | null;
  tax_form_submitted_at?: Date | string | null;
  tax_form_decided_at?: Date | string | null;
  tax_form_rejection_reason?: string | null;
}

export function taxFormOf(row: TaxFormColumns): TaxForm {
  if (!row.tax_form_status || !row.tax_form_kind || !row.tax_form_submitted_at) {
    return { status: 'missing', kind: null, submitted_at: null, decided_at: null, rejection_reason: null };
  }
  return {
    status: row.tax_form_status,
    kind: row.tax_form_kind,
    submitted_at: iso(row.tax_form_submitted_at),
    decided_at: isoOrNull(row.tax_form_decided_at ?? null),
    rejection_reason: row.tax_form_rejection_reason ?? null,
  };
}

/**
 * The hold rule, its one TypeScript form: a program that requires a tax form pays no affiliate whose
 * form is not accepted. payoutHoldSql is the same rule for the payout run's statement.
 */
export function payoutHoldOf(requireTaxForm: boolean, form: TaxForm): PayoutHold | null {
  if (!requireTaxForm || form.status === 'accepted') return null;
  const reason: PayoutHoldReason = `tax_form_${form.status}`;
  return { reason, message: holdMessage(reason) };
}

export const holdMessage = (reason: PayoutHoldReason): string =>
  `Payout held: tax form ${reason.slice('tax_form_'.length)}`;

/**
 * The hold rule in SQL over an affiliate row `a` and its program `p`: the reason
 * (`tax_form_missing` | `tax_form_submitted` | `tax_form_rejected`), or null when nothing holds.
 */
export const payoutHoldSql = (a: string, p: string): string =>
  `(case when ${p}.require_tax_form and coalesce(${a}.tax_form_status, 'missing') <> 'accepted' then 'tax_form_' || coalesce(${a}.tax_form_status, 'missing') end)`;

/** What the partner reads in the portal: what holds their payouts in a program, and what to do about it. */
export function partnerHoldMessage(
  reason: PayoutHoldReason,
  programName: string,
  rejectionReason: string | null,
  /** False while the service takes no tax document (no ENCRYPTION_KEY): the partner is not told to upload one here. */
  uploadsAccepted = true,
): string {
  if (!uploadsAccepted && reason !== 'tax_form_submitted')
    return `${programName} pays you once your tax form is accepted, and does not accept tax forms online yet: send it to the merchant another way.`;
  if (reason === 'tax_form_missing')
    return `${programName} pays you once your tax form is accepted: upload a W-9 (US persons) or a W-8BEN / W-8BEN-E (outside the US).`;
  if (reason === 'tax_form_submitted')
    return `Your tax form is waiting for the merchant's review: payouts in ${programName} are held until it is accepted.`;
  return `Your tax form was rejected${rejectionReason ? ` (${rejectionReason})` : ''}: upload a corrected one. Payouts in ${programName} are held until it is accepted.`;
}
