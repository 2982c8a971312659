/** A creation keyed by a unique constraint: the row, and whether an earlier request had created it. */
export interface Once<T> {
  row: T;
  /** True when the key named a row already: this call created nothing and answers that row. */
  deduped: boolean;
}

/**
 * The one rule of idempotent creation: the unique key decides (docs/architecture.md: idempotency lives
 * in unique constraints). `insert` is an INSERT ... ON CONFLICT (the key) DO NOTHING RETURNING,
 * answering the new row, or undefined when the key exists; then `findExisting` reads the row the
 * key names, and that row is the answer, deduped. Concurrent identical requests therefore all
 * answer the one row, whichever committed first: ON CONFLICT waits for a concurrent insert of the
 * same key and then sees its row.
 *
 * Its companion for requests the rules now refuse (a repeat whose key names a record answers it)
 * is modules/idempotent-repeat.ts.
 */
export async function insertOnce<T>(
  what: string,
  insert: () => Promise<T | undefined>,
  findExisting: () => Promise<T | undefined>,
): Promise<Once<T>> {
  const inserted = await insert();
  if (inserted !== undefined) return { row: inserted, deduped: false };
  const existing = await findExisting();
  // Rows are never deleted: a conflict whose row cannot be read is a defect, not a client's error.
  if (existing === undefined) throw new Error(`${what}: the insert conflicted but no row was found`);
  return { row: existing, deduped: true };
}
