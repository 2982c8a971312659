import { describe, expect, it } from 'vitest';
import { insertOnce } from '../../server/src/db/insert-once.js';

/** The one rule of idempotent creation (db/insert-once.ts), used by the customers and affiliates repositories. */
describe('insert once by a unique key', () => {
  it('answers the inserted row, not deduped, without reading', async () => {
    let read = false;
    expect(
      await insertOnce(
        'thing',
        async () => 'new',
        async () => ((read = true), 'old'),
      ),
    ).toEqual({ row: 'new', deduped: false });
    expect(read).toBe(false);
  });

  it('when the key existed (nothing inserted), answers the existing row, deduped', async () => {
    expect(
      await insertOnce(
        'thing',
        async () => undefined,
        async () => 'old',
      ),
    ).toEqual({ row: 'old', deduped: true });
  });

  it('a conflict whose row cannot be read is an error, never an answer', async () => {
    await expect(
      insertOnce(
        'thing',
        async () => undefined,
        async () => undefined,
      ),
    ).rejects.toThrow('thing: the insert conflicted but no row was found');
  });

  it('a failed insert fails, without reading', async () => {
    let read = false;
    await expect(
      insertOnce(
        'thing',
        () => Promise.reject(new Error('down')),
        async () => ((read = true), 'old'),
      ),
    ).rejects.toThrow('down');
    expect(read).toBe(false);
  });
});
