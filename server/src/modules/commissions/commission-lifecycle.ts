import { Decimal } from 'decimal.js';
import type { CommissionStatus } from '@affiliate-attribution/contract';
import { ConflictError } from '../../http/errors.js';

/**
 * The ledger's lifecycle rules (shared/spec/ledger.md, "Commissions"), as pure functions: what a
 * status becomes, what a refund does to an entry. The commissions repository stores their outcome.
 */

/** An entry as the rules see it. */
export interface LedgerEntryState {
  status: CommissionStatus;
  /** Exact decimal text. */
  amount: string;
  /** The payout carrying it (pending or paid), if any. */
  payoutId: string | null;
  /** When a pending entry approves itself; null when the program waits for the merchant. */
  approvesAt: Date | null;
}

/**
 * The status as a merchant sees it now: a `pending` entry whose `approves_at` has passed is
 * `approved`, with no job to flip it (queries apply the same rule in SQL, so it holds across
 * restarts and instances the moment the time passes).
 */
export function effectiveStatus(entry: Pick<LedgerEntryState, 'status' | 'approvesAt'>, now: Date): CommissionStatus {
  return entry.status === 'pending' && entry.approvesAt !== null && entry.approvesAt.getTime() <= now.getTime()
    ? 'approved'
    : entry.status;
}

/** POST /approve: pending or on_hold -> approved; approved stays (a repeat); anything else is a conflict. */
export function approved(entry: LedgerEntryState, now: Date): { status: 'approved'; changed: boolean } {
  const status = effectiveStatus(entry, now);
  if (status === 'approved') return { status, changed: entry.status !== 'approved' };
  if (status === 'pending' || status === 'on_hold') return { status: 'approved', changed: true };
  throw new ConflictError(`A ${status} commission cannot be approved`);
}

/**
 * POST /reject: pending, approved or on_hold and in no payout -> rejected; rejected stays; anything
 * else is a conflict. A sale's clawbacks (refunds after it went into a payout that was canceled
 * since) take back part of a commission that is no longer owed once the sale is rejected: they are
 * rejected with it (the repository does), so none may be in a payout yet.
 */
export function rejected(
  entry: LedgerEntryState,
  now: Date,
  clawbacks: readonly Pick<LedgerEntryState, 'payoutId'>[] = [],
): { status: 'rejected'; changed: boolean } {
  const status = effectiveStatus(entry, now);
  if (status === 'rejected') return { status, changed: false };
  if (entry.payoutId !== null) throw new ConflictError('This commission is in a payout: cancel the payout first');
  if (clawbacks.some((c) => c.payoutId !== null))
    throw new ConflictError('A clawback of this commission is in a payout: cancel that payout first');
  if (status === 'pending' || status === 'approved' || status === 'on_hold')
    return { status: 'rejected', changed: true };
  throw new ConflictError(`A ${status} commission cannot be rejected`);
}

/** What a refund of its conversion does to a sale entry. */
export type RefundEffect =
  /** Nothing owed changes (the entry was rejected or reversed already, or the commission did not move). */
  | { kind: 'none' }
  /** Before payment, part refunded: the entry owes less. */
  | { kind: 'reduce'; amount: string }
  /** Before payment, nothing left owed: reversed, its amount kept for the record. */
  | { kind: 'reverse' }
  /** Already carried by a payout (pending or paid): the entry stays as it is, a negative clawback takes back the difference. */
  | { kind: 'clawback'; amount: string };

/**
 * The sale entry after a refund moved its conversion's commission from `before` to `after`
 * (attribution/refunds.ts computes both, to the currency's minor unit). An entry in a payout is
 * frozen (the payout's amount must stay what it was): the refunded part becomes a clawback, netted
 * in the next payout. Otherwise the entry owes the difference less; it is reversed when nothing is
 * left. The reduction is relative, never "set to `after`": an entry whose payout was canceled after
 * a clawback comes back whole while its clawback stays, and the pair must keep netting to the
 * conversion's commission through later refunds. So entry + clawbacks always equals the
 * conversion's commission (the ledger's property test holds it).
 */
export function refundEffect(sale: LedgerEntryState, before: string, after: string): RefundEffect {
  const delta = new Decimal(after).minus(new Decimal(before));
  if (sale.status === 'rejected' || sale.status === 'reversed' || delta.isZero()) return { kind: 'none' };
  if (sale.payoutId !== null || sale.status === 'paid') return { kind: 'clawback', amount: delta.toString() };
  const left = new Decimal(sale.amount).plus(delta);
  return left.lte(0) ? { kind: 'reverse' } : { kind: 'reduce', amount: left.toString() };
}

/** The program's settings a sale entry is written with. */
export interface SaleEntryProgram {
  hold_days: number;
  auto_approve: boolean;
}

/**
 * When a sale's entry approves itself: the sale's `occurred_at` plus the program's hold (so a sale
 * reported late is held from when it happened); null when the program waits for the merchant.
 */
export function saleApprovesAt(occurredAt: Date, program: SaleEntryProgram): Date | null {
  return program.auto_approve ? new Date(occurredAt.getTime() + program.hold_days * 86_400_000) : null;
}

/** A conversion earning nothing (past the commission window, a zero amount) has no entry. */
export const earnsSaleEntry = (commission: string): boolean => new Decimal(commission).gt(0);

/** Statuses whose amount is owed to the affiliate (or already paid): the others count zero. */
export const OWING_STATUSES: readonly CommissionStatus[] = ['pending', 'approved', 'on_hold', 'paid'];

/**
 * effectiveStatus in SQL: the status of the row aliased `alias` as of the statement's now(), by
 * the rule's one SQL definition (the baseline migration's commission_status_at). `alias` must
 * provide `status` and `approves_at`.
 */
export const effectiveStatusSql = (alias: string): string =>
  `commission_status_at(${alias}.status, ${alias}.approves_at, now())`;

/**
 * Whether the row aliased `alias` is due as of the statement's now(): pending and past its
 * approves_at (the baseline migration's commission_due; never null, so `not` keeps the pending
 * entries without approves_at). Inlined by the planner: as indexable as the comparisons it stands for.
 */
export const dueSql = (alias?: string): string => {
  const column = (name: string) => (alias ? `${alias}.${name}` : name);
  return `commission_due(${column('status')}, ${column('approves_at')}, now())`;
};
