import { describe, expect, it } from 'vitest';
import { InsertBatcher, writeBatching } from '../../server/src/db/batched-insert.js';
import { batchedWriteConnections, poolOf } from '../../server/src/db/database.js';
import { Db } from '../../server/src/db/sql.js';
import { testServer } from '../support/server.js';
import { sql } from 'kysely';

/**
 * Batched writes share one bound on connections per database (db/database.ts): however many
 * batchers there are, and however their statements fail and are retried row by row, they hold at
 * most half the pool, and the rest of the service still gets a connection. On the real pool, with
 * statements that hold their connection (pg_sleep) the way a slow insert would.
 */
describe('batched writes: bounded by the pool', () => {
  it(
    'four batchers with full batches, and a failed batch retried row by row, never hold more than half the pool',
    { timeout: 60_000 },
    async () => {
      const { db } = await testServer();
      const handle = Db.of(db.orm);
      const poolMax = poolOf(db.orm).options.max;
      const bound = batchedWriteConnections(poolMax);
      let holding = 0;
      let mostHeld = 0;
      // Every statement holds a pooled connection for 30 ms; rows named "bad" fail their statement.
      const write = async (rows: string[]) => {
        holding++;
        mostHeld = Math.max(mostHeld, holding);
        try {
          await handle.rows(sql`select pg_sleep(0.03)`);
          if (rows.some((row) => row.startsWith('bad'))) throw new Error('check constraint violated');
          return rows.map((row) => `stored ${row}`);
        } finally {
          holding--;
        }
      };
      const batchers = Array.from(
        { length: 4 },
        () => new InsertBatcher(write, { ...writeBatching(db.orm), maxRows: 20 }),
      );
      const results = batchers.flatMap((batcher, b) =>
        Array.from({ length: 200 }, (_, i) =>
          batcher.add(i === 7 ? `bad-${b}` : `row-${b}-${i}`).then(
            (r) => r,
            (err: Error) => err.message,
          ),
        ),
      );
      // While every batcher is busy, an ordinary statement still gets a connection at once.
      await new Promise((r) => setTimeout(r, 50));
      const started = Date.now();
      await handle.rows(sql`select 1`);
      const waitedMs = Date.now() - started;

      const settled = await Promise.all(results);
      expect(settled.filter((r) => r === 'check constraint violated')).toHaveLength(4);
      expect(settled.filter((r) => String(r).startsWith('stored '))).toHaveLength(796);
      expect(mostHeld).toBeGreaterThan(0);
      expect(mostHeld).toBeLessThanOrEqual(bound);
      if (poolMax > 1) expect(waitedMs).toBeLessThan(500);
    },
  );
});
