import { sql, type SelectQueryBuilder } from 'kysely';
import type { CursorPosition } from '../http/pagination.js';
import type { Tables } from './database.js';

/**
 * A page of a list in creation order (oldest first) (http/pagination.ts) of a table indexed on (organization_id,
 * created_at, id): the rows after the cursor's position, and one more than the page, so that
 * pageOf knows whether another page follows.
 */
export function pageInCreationOrder<T extends 'programs' | 'affiliates' | 'coupons', O>(
  query: SelectQueryBuilder<Tables, T, O>,
  after: CursorPosition | undefined,
  limit: number,
): SelectQueryBuilder<Tables, T, O> {
  const positioned = after ? query.where(sql<boolean>`(created_at, id) > (${after.at}, ${after.id})`) : query;
  return positioned
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit + 1);
}

/** The same, newest first (created_at, id descending): the ledger's lists (commissions, payouts). */
export function pageNewestFirst<T extends 'commissions' | 'payouts', O>(
  query: SelectQueryBuilder<Tables, T, O>,
  before: CursorPosition | undefined,
  limit: number,
): SelectQueryBuilder<Tables, T, O> {
  const positioned = before ? query.where(sql<boolean>`(created_at, id) < (${before.at}, ${before.id})`) : query;
  return positioned
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1);
}
