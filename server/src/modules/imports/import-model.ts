import type { ImportKind } from '@affiliate-attribution/contract';

/**
 * What every source's reader produces, whatever the platform: rows in our terms, still keyed by
 * the source's own ids (`source_id`), amounts as exact decimal text in the currency's major unit.
 * The writer (import-writer.ts) knows nothing of any platform; a reader (sources/*.ts) knows
 * nothing of our tables.
 */
export interface SourceAffiliate {
  source_id: string;
  email: string;
  name: string | null;
  status: 'active' | 'pending' | 'disabled';
  payout_email: string | null;
  /** Every link token that must keep attributing to the partner; the first becomes the slug. */
  tokens: string[];
  /** When the partner joined at the source (our `created_at`); unknown: the import's time. */
  created_at?: Date | null;
}

export interface SourceCustomer {
  source_id: string;
  /** The merchant's own customer id (what the merchant's billing knows the customer by). */
  customer_id: string;
  email: string | null;
  name: string | null;
  affiliate_source_id: string;
  /** When the customer signed up at the source (a lead's date; our `created_at`); unknown: their first sale's. */
  created_at?: Date | null;
}

export interface SourceSale {
  source_id: string;
  /** The conversion's `external_id`: the source's id of the sale, unchanged. */
  external_id: string;
  amount: string;
  refunded_amount: string;
  currency: string;
  occurred_at: Date;
  customer: SourceCustomer | null;
}

export type ImportedCommissionStatus = 'pending' | 'approved' | 'paid' | 'reversed';

export interface SourceCommission {
  source_id: string;
  affiliate_source_id: string;
  status: ImportedCommissionStatus;
  amount: string;
  currency: string;
  /** When a pending commission becomes approved at the source (Rewardful `due_at`). */
  approves_at: Date | null;
  approved_at: Date | null;
  /** The paid payout that carried it, when the source says. */
  payout_source_id: string | null;
  sale: SourceSale;
  /** When the source recorded the commission (our `created_at`); unknown: its sale's `occurred_at`. */
  created_at?: Date | null;
}

/**
 * A refund the source records as a row of its own (Tolt's `type: "refund"` commission, created when a
 * paid commission's sale is refunded): the sale it refunds becomes refunded here, and what the source
 * takes back from the partner becomes a clawback entry of that sale.
 */
export interface SourceRefund {
  source_id: string;
  /** The refunded sale's source id (SourceSale.source_id). */
  sale_source_id: string;
  /** How much of the sale was refunded, in its currency; null: all of it (what is left). */
  amount: string | null;
  /** What the partner gives back (a positive amount, in `clawback_currency`), when the source says. */
  clawback: { amount: string; currency: string; status: 'approved' | 'paid'; payout_source_id: string | null } | null;
  /** When the source recorded the refund (the clawback's `created_at`); unknown: the import's time. */
  created_at?: Date | null;
}

export interface SourcePayout {
  source_id: string;
  affiliate_source_id: string;
  amount: string;
  currency: string;
  paid_at: Date;
  commission_source_ids: string[];
}

export interface Skip {
  kind: ImportKind;
  source_id: string;
  reason: string;
}

/** One page read from a source: rows of one kind (the phase's), and the rows it could not map. */
export interface SourceBatch {
  affiliates?: SourceAffiliate[];
  customers?: SourceCustomer[];
  payouts?: SourcePayout[];
  commissions?: SourceCommission[];
  /** Refunds of sales read in this phase or before (the commissions phase, after its commissions). */
  refunds?: SourceRefund[];
  skipped?: Skip[];
}

/** The phases, in the order their rows depend on each other. */
export const PHASES = ['affiliates', 'customers', 'payouts', 'commissions'] as const;
export type Phase = (typeof PHASES)[number];

export interface SourcePage {
  batch: SourceBatch;
  /** The next page to read, or null after the last one. */
  next: number | null;
}

/**
 * One campaign's terms at the source, in the program's fields (import-terms.ts): a field the source
 * does not say is left out; null where the source says "none" (no minimum, no limit).
 */
export interface SourceTerms {
  source_id: string;
  name: string | null;
  /** The currency of its money terms (a flat commission, the minimum payout), when it has them. */
  currency: string | null;
  terms: Partial<{
    commission_type: 'percent' | 'flat';
    commission_value: string;
    minimum_payout: string;
    commission_window_months: number | null;
    commission_max_conversions: number | null;
    hold_days: number;
    click_window_days: number;
  }>;
}

/** A platform's reader: one page of one phase at a time, so a resumed import starts where it stopped. */
export interface SourceReader {
  readPage(phase: Phase, page: number): Promise<SourcePage>;
  /** Its campaigns' terms, where the source's API documents them (else absent: not compared). */
  readTerms?(): Promise<SourceTerms[]>;
}

/**
 * A failure that cannot heal by waiting (a wrong or unsendable credential, a refused request, an
 * answer that is not what the source documents): the import fails at once with this message,
 * nothing retried. The message is shown to the organization's members: it never holds a credential.
 */
export class ImportSourceError extends Error {}

/**
 * The source cannot be read now (unreachable, HTTP 5xx, its rate limit): the import waits and tries
 * again from its last written page, a bounded number of times (import-runner.ts). `retryAfterMs`:
 * the wait the source asked for (a 429's Retry-After), when it said.
 */
export class ImportSourceUnavailable extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    /** No answer at all (refused, not found, timed out): not the source's own trouble (a 5xx or 429). */
    readonly unreachable = false,
  ) {
    super(message);
  }
}

/** The import was cancelled while it ran: its job stops where it is, rolling back the page it was writing. */
export class ImportCancelled extends Error {
  constructor() {
    super('the import was cancelled');
  }
}

export type KindCounts = { created: number; already_present: number; skipped: number };
export type Counts = Record<ImportKind, KindCounts>;

export const emptyCounts = (): Counts => ({
  affiliates: { created: 0, already_present: 0, skipped: 0 },
  customers: { created: 0, already_present: 0, skipped: 0 },
  conversions: { created: 0, already_present: 0, skipped: 0 },
  commissions: { created: 0, already_present: 0, skipped: 0 },
  payouts: { created: 0, already_present: 0, skipped: 0 },
});
