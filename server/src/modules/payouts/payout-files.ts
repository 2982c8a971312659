import { stringify } from 'csv-stringify/sync';
import { Decimal } from 'decimal.js';
import { minorUnitDigits } from '../../attribution/money.js';
import { BadRequestError } from '../../http/errors.js';

/** What a payout file says of one payout: the payout and its affiliate. */
export interface PayoutFileRow {
  id: string;
  affiliate_id: string;
  program_id: string;
  /** The affiliate's display name, if any. */
  name: string | null;
  /** The affiliate's sign-in e-mail: where the money goes when no payout_email is set. */
  email: string;
  payout_email: string | null;
  /** Exact decimal text in major units. */
  amount: string;
  currency: string;
  commission_count: number;
  status: string;
  reference: string | null;
  created_at: string;
  paid_at: string | null;
}

export const PAYOUT_FILE_FORMATS = ['csv', 'paypal', 'wise'] as const;
export type PayoutFileFormat = (typeof PAYOUT_FILE_FORMATS)[number];

/**
 * PayPal Payouts Web takes at most 5,000 lines per file and Wise batch payments 1,000 transfers
 * (shared/spec/payout-files.md): past that, the merchant narrows the export (by program or
 * currency) rather than receiving a file the provider refuses.
 */
export const MAX_ROWS_PER_FILE: Record<PayoutFileFormat, number> = { csv: 100_000, paypal: 5_000, wise: 1_000 };

/** The address paid: the affiliate's payout e-mail, else the e-mail it signed up with. */
const recipientOf = (row: PayoutFileRow) => row.payout_email ?? row.email;

/** Amount in major units with a decimal point, as many decimals as the currency's minor unit ("100.50", "1500" for JPY). */
const majorUnits = (row: PayoutFileRow) => new Decimal(row.amount).toFixed(minorUnitDigits(row.currency));

/**
 * A spreadsheet reads a cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return as a
 * formula (CSV injection, OWASP): free text a partner typed (a name) is prefixed with `'`.
 */
export function inert(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/** The payout id without hyphens, cut to the 30 characters PayPal allows its "customer id" (no spaces). */
const paypalReference = (id: string) => id.replaceAll('-', '').slice(0, 30);

/**
 * One file per format:
 * - `csv`: every field of the payout and its recipient, with a header row; for the merchant's own books.
 * - `paypal`: PayPal Payouts Web's upload (PayPal developer docs, "Payouts Web" / "Use Web UI",
 *   summarized in shared/spec/payout-files.md): no header; recipient, amount, currency, customer
 *   id (30 characters, no spaces), note to recipient, wallet `PAYPAL`. One currency per file.
 * - `wise`: Wise's "send by email" batch template (Wise Help Centre, "What's a batch payment
 *   template?" and "How do I fill in my batch template?"): its header row, unchanged; Wise e-mails
 *   each recipient for their bank details. `amountCurrency: target`: the partner receives exactly
 *   the amount owed, fees on the merchant.
 */
export function payoutFile(format: PayoutFileFormat, rows: readonly PayoutFileRow[]): string {
  if (rows.length > MAX_ROWS_PER_FILE[format]) {
    throw new BadRequestError(
      `A ${format} file holds at most ${MAX_ROWS_PER_FILE[format]} payouts and ${rows.length} match: narrow the export with program_id or currency`,
    );
  }
  switch (format) {
    case 'csv':
      return stringify(
        rows.map((r) => ({
          payout_id: r.id,
          affiliate_id: r.affiliate_id,
          program_id: r.program_id,
          name: inert(r.name ?? ''),
          payout_email: recipientOf(r),
          amount: majorUnits(r),
          currency: r.currency,
          commission_count: r.commission_count,
          status: r.status,
          reference: inert(r.reference ?? ''),
          created_at: r.created_at,
          paid_at: r.paid_at ?? '',
        })),
        {
          header: true,
          columns: [
            'payout_id',
            'affiliate_id',
            'program_id',
            'name',
            'payout_email',
            'amount',
            'currency',
            'commission_count',
            'status',
            'reference',
            'created_at',
            'paid_at',
          ],
        },
      );
    case 'paypal': {
      const currencies = new Set(rows.map((r) => r.currency));
      if (currencies.size > 1) {
        throw new BadRequestError(
          `PayPal takes one currency per file and these payouts are in ${[...currencies].sort().join(', ')}: export each with currency=`,
        );
      }
      return stringify(
        rows.map((r) => [
          recipientOf(r),
          majorUnits(r),
          r.currency,
          paypalReference(r.id),
          `Affiliate commissions, payout ${r.id}`,
          'PAYPAL',
        ]),
      );
    }
    case 'wise':
      return stringify(
        rows.map((r) => ({
          name: inert(r.name ?? recipientOf(r)),
          recipientEmail: recipientOf(r),
          paymentReference: `Payout ${r.id.slice(0, 8)}`,
          receiverType: 'PERSON',
          amountCurrency: 'target',
          amount: majorUnits(r),
          sourceCurrency: r.currency,
          targetCurrency: r.currency,
        })),
        {
          header: true,
          columns: [
            'name',
            'recipientEmail',
            'paymentReference',
            'receiverType',
            'amountCurrency',
            'amount',
            'sourceCurrency',
            'targetCurrency',
          ],
        },
      );
  }
}
