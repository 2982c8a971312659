import { minorUnitDigits } from '../../../attribution/money.js';
import type { Skip } from '../import-model.js';
import { fromMinorUnits } from './rewardful.js';

/** What the PartnerStack and Tapfiliate readers share to turn a source's JSON rows into ours. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a source's JSON row, read field by field and checked where used
export type Json = Record<string, any>;

/** A row that cannot be mapped throws this; the rest of the page goes on and the row is reported with its reason. */
export class Unmappable extends Error {}

export function collect<T>(
  rows: Json[],
  kind: Skip['kind'],
  skipped: Skip[],
  map: (row: Json) => T | T[],
  idOf: (row: Json) => unknown = (row) => row?.id,
): T[] {
  const out: T[] = [];
  for (const row of rows) {
    try {
      const mapped = map(row);
      if (Array.isArray(mapped)) out.push(...mapped);
      else out.push(mapped);
    } catch (err) {
      if (!(err instanceof Unmappable)) throw err;
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a source's id (a string or a number), shown as received
      skipped.push({ kind, source_id: String(idOf(row) ?? '(no id)'), reason: err.message });
    }
  }
  return out;
}

export const text = (value: unknown): string | null => {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
};

export function required(value: unknown, field: string): string {
  const found = text(value);
  if (!found) throw new Unmappable(`no ${field}`);
  return found;
}

export function email(value: unknown): string {
  const found = text(value);
  if (!found || !/^[^\s@]+@[^\s@]+$/.test(found))
    throw new Unmappable(`no valid e-mail (${JSON.stringify(value ?? null)})`);
  return found.toLowerCase();
}

export function currencyOf(value: unknown): string {
  const code = text(value)?.toUpperCase();
  if (!code || !/^[A-Z]{3}$/.test(code)) throw new Unmappable(`no valid currency (${JSON.stringify(value ?? null)})`);
  return code;
}

/** An ISO date text, or (PartnerStack) milliseconds since the epoch. */
export function date(value: unknown, field: string): Date {
  const at = typeof value === 'string' || typeof value === 'number' ? new Date(value) : undefined;
  if (!at || Number.isNaN(at.getTime()))
    throw new Unmappable(`${field}: not a date (${JSON.stringify(value ?? null)})`);
  return at;
}

/** Whole minor units (cents) to exact decimal text in the major unit; a non-integer is unmappable. */
export function minor(value: unknown, currency: string, field: string): string {
  try {
    return fromMinorUnits(value, currency, field);
  } catch (err) {
    throw new Unmappable((err as Error).message);
  }
}

/**
 * A JSON number in the major unit (Tapfiliate: 12.5 USD) to exact decimal text, refusing one finer
 * than the currency's minor unit rather than rounding money silently.
 */
export function major(value: unknown, currency: string, field: string): string {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n))
    throw new Unmappable(`${field}: not an amount (${JSON.stringify(value ?? null)})`);
  const scaled = n * 10 ** minorUnitDigits(currency);
  const whole = Math.round(scaled);
  if (Math.abs(scaled - whole) > 1e-6)
    throw new Unmappable(`${field}: ${n} ${currency} is finer than the currency's minor unit`);
  return minor(whole, currency, field);
}

/** A date the source may give (ISO text, or milliseconds since the epoch): null when absent or unreadable. */
export function dateOrNull(...values: unknown[]): Date | null {
  for (const value of values) {
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    const at = new Date(value);
    if (!Number.isNaN(at.getTime())) return at;
  }
  return null;
}
