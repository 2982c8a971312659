import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../server/src/db/embedded.js';

/**
 * The embedded database's pool holds one connection; when it drops one (idle past pg-pool's
 * timeout, or the start-up probe of db/orm.ts) and opens the next at once, the old socket may still
 * be closing on the server's side. That next connection must be accepted, not refused: refused, the
 * request that opened it answered 503 (a flake of the embedded-idle suite on a loaded machine).
 */
describe('embedded database: a connection opened while the previous one is closing', () => {
  let embedded: EmbeddedPostgres;
  beforeAll(async () => {
    embedded = await startEmbeddedPostgres();
  });
  afterAll(async () => {
    await embedded?.stop();
  });

  it('is accepted, 10 times in a row', async () => {
    const failures: string[] = [];
    for (let i = 0; i < 10; i++) {
      const previous = new pg.Client({ connectionString: embedded.url });
      await previous.connect();
      await previous.query('select 1');
      const closing = previous.end();
      const next = new pg.Client({ connectionString: embedded.url });
      next.on('error', () => undefined);
      try {
        await next.connect();
        await next.query('select 1');
      } catch (err) {
        failures.push(String(err));
      } finally {
        await Promise.all([closing, next.end().catch(() => undefined)]);
      }
    }
    expect(failures).toEqual([]);
  });
});
