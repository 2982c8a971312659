import { PAGE_LIMIT_DEFAULT } from '@affiliate-attribution/contract';
import { BadRequestError } from './errors.js';
import { isUuid } from './serialize.js';

/** An opaque cursor: the sort position (timestamp, id) of the last item of the previous page. */
export interface CursorPosition {
  at: Date;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.at.toISOString(), position.id])).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): CursorPosition | undefined {
  if (cursor === undefined) return undefined;
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof at === 'string' && typeof id === 'string' && isUuid(id)) {
      const date = new Date(at);
      // Only what encodeCursor writes: a four-digit year in ISO-8601 form, which PostgreSQL reads
      // as the same instant (years outside 1-9999 are beyond its range or read differently).
      if (
        !Number.isNaN(date.getTime()) &&
        date.toISOString() === at &&
        date.getUTCFullYear() >= 1 &&
        date.getUTCFullYear() <= 9999
      )
        return { at: date, id };
    }
  } catch {
    // fall through: a cursor we did not issue
  }
  throw new BadRequestError('cursor: Invalid cursor');
}

/** Fetch one row more than the page to know whether a next page exists. */
export function pageOf<T>(
  rows: T[],
  limit: number,
  positionOf: (row: T) => CursorPosition,
): { items: T[]; next_cursor: string | null } {
  if (rows.length <= limit) return { items: rows, next_cursor: null };
  const items = rows.slice(0, limit);
  return { items, next_cursor: encodeCursor(positionOf(items[items.length - 1])) };
}

export const pageLimit = (limit: number | undefined): number => limit ?? PAGE_LIMIT_DEFAULT;
