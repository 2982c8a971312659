/** Timestamps from the driver arrive as Date or as PostgreSQL text; the wire wants ISO-8601 UTC. */
export function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

export function isoOrNull(value: Date | string | null | undefined): string | null {
  return value === null || value === undefined ? null : iso(value);
}

/** numeric columns arrive as strings so that no precision is lost in the database round trip. */
export function decimalToNumber(value: string | number): number {
  return typeof value === 'number' ? value : Number(value);
}

export { isUuid } from '../identifiers.js';
