import type { Skip } from '../import-model.js';
import { fromMinorUnits } from './rewardful.js';

/**
 * Row helpers shared by the API readers (tolt.ts, firstpromoter.ts): a row that cannot be mapped
 * throws Unmappable with its reason, and `collect` turns that into a Skip while the rest of the page
 * goes on.
 */
export class Unmappable extends Error {}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a source's JSON row, read field by field and checked where used
export type Json = Record<string, any>;

export function collect<T>(rows: Json[], kind: Skip['kind'], skipped: Skip[], map: (row: Json) => T): T[] {
  const out: T[] = [];
  for (const row of rows) {
    try {
      out.push(map(row));
    } catch (err) {
      if (!(err instanceof Unmappable)) throw err;
      skipped.push({ kind, source_id: String(row?.id ?? '(no id)'), reason: err.message });
    }
  }
  return out;
}

/** A non-empty string, or a number turned into one (FirstPromoter's ids are integers). */
export const text = (value: unknown): string | null =>
  typeof value === 'number' && Number.isFinite(value)
    ? String(value)
    : typeof value === 'string' && value.trim() !== ''
      ? value.trim()
      : null;

export function idOf(row: Json): string {
  const value = text(row?.id);
  if (!value) throw new Unmappable('no id');
  return value;
}

export function emailOf(value: unknown): string {
  const email = text(value);
  if (!email || !/^[^\s@]+@[^\s@]+$/.test(email))
    throw new Unmappable(`no valid e-mail (${JSON.stringify(value ?? null)})`);
  return email.toLowerCase();
}

export function currencyOf(value: unknown): string {
  const code = text(value)?.toUpperCase();
  if (!code || !/^[A-Z]{3}$/.test(code)) throw new Unmappable(`no valid currency (${JSON.stringify(value ?? null)})`);
  return code;
}

export function dateOf(value: unknown, field: string): Date {
  const at = typeof value === 'string' ? new Date(value) : undefined;
  if (!at || Number.isNaN(at.getTime()))
    throw new Unmappable(`${field}: not a date (${JSON.stringify(value ?? null)})`);
  return at;
}

/** Minor units as a JSON integer or as digits in a string (Tolt serialises its 64-bit amounts as strings). */
export function minorUnits(value: unknown, currency: string, field: string): string {
  const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isInteger(n))
    throw new Unmappable(`${field}: not a whole number of minor units (${JSON.stringify(value ?? null)})`);
  return fromMinorUnits(n, currency, field);
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
