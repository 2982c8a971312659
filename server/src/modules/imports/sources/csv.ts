import { parse } from 'csv-parse/sync';
import type {
  ImportedCommissionStatus,
  Phase,
  Skip,
  SourceAffiliate,
  SourceCommission,
  SourceCustomer,
  SourcePage,
  SourceReader,
} from '../import-model.js';
import { ImportSourceError } from '../import-model.js';

/**
 * CSV for any platform without an importer (docs/imports.md, "CSV"): affiliates, and optionally
 * conversions with their commissions, in major units (12.50), in one request's body. Every
 * phase is one page.
 */
export const AFFILIATES_HEADER = [
  'id',
  'email',
  'first_name',
  'last_name',
  'status',
  'payout_email',
  'tokens',
] as const;
export const CONVERSIONS_HEADER = [
  'id',
  'affiliate_id',
  'customer_id',
  'customer_email',
  'amount',
  'currency',
  'occurred_at',
  'commission_amount',
  'commission_status',
] as const;

type Row = Record<string, string>;
const DECIMAL = /^\d+(\.\d+)?$/;
const STATUSES: readonly ImportedCommissionStatus[] = ['pending', 'approved', 'paid', 'reversed'];

/**
 * csv-parse reads its input as UTF-8 bytes, so a lone UTF-16 surrogate in the text would come out
 * as U+FFFD: the row would be imported with its text silently changed. Each one is carried through
 * the parser as a code point of Unicode's Supplementary Private Use Area-B (U+100000 + its offset)
 * and put back in the parsed fields, where the writer finds it and skips the row with its reason
 * (storable-text.ts). A text already holding such code points is parsed as it is.
 */
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const CARRIERS = /[\u{100000}-\u{1007FF}]/gu;

function parseKeepingSurrogates(csv: string): Row[] {
  const options = { columns: true, skip_empty_lines: true, trim: true, bom: true } as const;
  // search(), not test(): a global pattern's test() carries lastIndex from one call to the next.
  if (csv.search(LONE_SURROGATES) < 0 || csv.search(CARRIERS) >= 0) return parse<Row>(csv, options);
  const carried = csv.replace(LONE_SURROGATES, (c) => String.fromCodePoint(0x100000 + c.charCodeAt(0) - 0xd800));
  const back = (text: string) =>
    text.replace(CARRIERS, (c) => String.fromCharCode(0xd800 + c.codePointAt(0)! - 0x100000));
  return parse<Row>(carried, options).map((row) =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [back(k), back(v)])),
  );
}

function table(csv: string, header: readonly string[], field: string): Row[] {
  let rows: Row[];
  try {
    rows = parseKeepingSurrogates(csv);
  } catch (err) {
    throw new ImportSourceError(`credentials.${field}: not readable CSV (${(err as Error).message})`);
  }
  const first = rows[0];
  const missing = first ? header.filter((h) => !(h in first)) : [];
  if (missing.length)
    throw new ImportSourceError(
      `credentials.${field}: the header lacks ${missing.join(', ')} (expected ${header.join(',')})`,
    );
  return rows;
}

export class CsvReader implements SourceReader {
  private readonly affiliates: Row[];
  private readonly conversions: Row[];

  constructor(credentials: Record<string, string>) {
    if (!credentials.affiliates_csv) throw new ImportSourceError('credentials.affiliates_csv: Required');
    this.affiliates = table(credentials.affiliates_csv, AFFILIATES_HEADER, 'affiliates_csv');
    this.conversions = credentials.conversions_csv
      ? table(credentials.conversions_csv, CONVERSIONS_HEADER, 'conversions_csv')
      : [];
  }

  async readPage(phase: Phase): Promise<SourcePage> {
    const skipped: Skip[] = [];
    if (phase === 'affiliates')
      return {
        batch: { affiliates: this.each(this.affiliates, 'affiliates', skipped, toAffiliate), skipped },
        next: null,
      };
    if (phase === 'commissions')
      return {
        batch: { commissions: this.each(this.conversions, 'commissions', skipped, toCommission), skipped },
        next: null,
      };
    return { batch: {}, next: null };
  }

  private each<T>(rows: Row[], kind: Skip['kind'], skipped: Skip[], map: (row: Row) => T | string): T[] {
    const out: T[] = [];
    rows.forEach((row, i) => {
      const mapped = map(row);
      if (typeof mapped === 'string') skipped.push({ kind, source_id: row.id || `line ${i + 2}`, reason: mapped });
      else out.push(mapped);
    });
    return out;
  }
}

function toAffiliate(row: Row): SourceAffiliate | string {
  if (!row.id) return 'no id';
  if (!/^[^\s@]+@[^\s@]+$/.test(row.email ?? '')) return `no valid e-mail (${JSON.stringify(row.email ?? '')})`;
  const status = row.status || 'active';
  if (status !== 'active' && status !== 'pending' && status !== 'disabled')
    return `status "${status}" is not active, pending or disabled`;
  const name = [row.first_name, row.last_name].filter(Boolean).join(' ') || null;
  return {
    source_id: row.id,
    email: row.email.toLowerCase(),
    name,
    status,
    payout_email: row.payout_email || null,
    tokens: (row.tokens ?? '').split(/\s+/).filter(Boolean),
  };
}

function toCommission(row: Row): SourceCommission | string {
  if (!row.id) return 'no id';
  if (!row.affiliate_id) return 'no affiliate_id';
  const currency = (row.currency ?? '').toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) return `currency "${row.currency ?? ''}" is not an ISO 4217 code`;
  if (!DECIMAL.test(row.amount ?? '')) return `amount "${row.amount ?? ''}" is not a decimal number`;
  if (!DECIMAL.test(row.commission_amount ?? ''))
    return `commission_amount "${row.commission_amount ?? ''}" is not a decimal number`;
  const occurredAt = new Date(row.occurred_at ?? '');
  if (!row.occurred_at || Number.isNaN(occurredAt.getTime()))
    return `occurred_at "${row.occurred_at ?? ''}" is not a date`;
  const status = (row.commission_status || 'approved') as ImportedCommissionStatus;
  if (!STATUSES.includes(status))
    return `commission_status "${row.commission_status}" is not pending, approved, paid or reversed`;
  const customer: SourceCustomer | null = row.customer_id
    ? {
        source_id: row.customer_id,
        customer_id: row.customer_id,
        email: row.customer_email || null,
        name: null,
        affiliate_source_id: row.affiliate_id,
      }
    : null;
  return {
    source_id: row.id,
    affiliate_source_id: row.affiliate_id,
    status,
    amount: row.commission_amount,
    currency,
    approves_at: null,
    approved_at: status === 'approved' || status === 'paid' ? occurredAt : null,
    payout_source_id: null,
    sale: {
      source_id: row.id,
      external_id: row.id,
      amount: row.amount,
      refunded_amount: '0',
      currency,
      occurred_at: occurredAt,
      customer,
    },
  };
}
