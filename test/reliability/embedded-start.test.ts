import { describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { closeOrm, initOrm } from '../../server/src/db/orm.js';
import { Db } from '../../server/src/db/sql.js';
import { sql } from 'kysely';

/**
 * Every start migrates on a connection of its own, closes it, then opens the serving pool. The
 * embedded database (what `npm start` runs without DATABASE_URL) accepts one connection at a time
 * and refuses a second while the first is still open, so the serving pool may connect only once
 * the migrating connection's socket has closed (closing a pg pool does not wait for that). This
 * runs on the embedded database whatever DATABASE_URL says.
 */
describe('embedded database: starting', () => {
  it('migrates, then serves, on every start', { timeout: 60_000 }, async () => {
    const embedded = await startEmbeddedPostgres();
    try {
      for (let start = 0; start < 3; start++) {
        const orm = await initOrm(embedded.url, 1);
        try {
          expect(await Db.of(orm).one(sql`select count(*)::int as n from mikro_orm_migrations`)).toMatchObject({
            n: expect.any(Number),
          });
        } finally {
          await closeOrm(orm, true);
        }
      }
    } finally {
      await embedded.stop();
    }
  });
});
