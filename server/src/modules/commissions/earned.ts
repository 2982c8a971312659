import { Decimal } from 'decimal.js';

/**
 * "Earned", the one figure the dashboard and the partner portal both show for an affiliate: what
 * the affiliate is owed or was paid, net of what refunds took back. It is the sum of the entries
 * that are `pending`, `approved` (a pending one past its `approves_at` included) or `paid`;
 * clawbacks and negative adjustments are `approved` or `paid`, so they count negative.
 *
 * Left out: `reversed` (a sale refunded in full before payment: its amount is kept for the record
 * only, nothing is owed) and `rejected` (never paid). `on_hold` is left out too and shown apart as
 * "under review": a fraud signal fired and the merchant has not released it yet, so counting it
 * would tell a partner they earned what they may never be paid.
 *
 * The statuses are the definition; the SQL predicate and the sum over status totals below are its
 * two spellings, for statements over rows and for figures already summed by status (the reports).
 */
export const EARNED_STATUSES = ['pending', 'approved', 'paid'] as const;

/** Whether the commission row aliased `alias` counts as earned (its stored status suffices: a pending entry past its hold is approved, earned either way). */
export const earnedSql = (alias: string): string =>
  `${alias}.status in (${EARNED_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/** Earned from totals by status (exact decimal text or numbers). */
export function earnedOf(totals: Record<(typeof EARNED_STATUSES)[number], string | number>): Decimal {
  return EARNED_STATUSES.reduce((sum, status) => sum.plus(new Decimal(totals[status])), new Decimal(0));
}
