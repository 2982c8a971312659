import { describe, expect, it } from 'vitest';
import { kyselyOf } from '../../server/src/db/database.js';
import { Sql } from '../../server/src/db/sql.js';
import { StoredStatement } from '../../server/src/db/stored-statement.js';
import { createMerchant } from '../support/api.js';
import { testServer } from '../support/server.js';

/**
 * The hot statements run as PL/pgSQL functions created on first use (db/stored-statement.ts):
 * planned once per server connection, with no state on the client's connection.
 */
describe('stored statements', () => {
  it('are created on first use, by one of many concurrent first callers, and answer every caller', async () => {
    const { db } = await testServer();
    const sql = Sql.of(db.orm);
    const statement = new StoredStatement('test_sum', ['int[]'], 'table(total bigint)', `select sum(v)::bigint as total from unnest($1::int[]) as t(v)`);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => statement.run<{ total: string }>(kyselyOf(db.orm), [[i, 1, 2]])));
    expect(answers.map((rows) => rows[0]!.total)).toEqual(Array.from({ length: 8 }, (_, i) => String(i + 3)));
    const created = await sql.rows('select 1 from pg_proc where proname = ?', [statement.functionName]);
    expect(created).toHaveLength(1);
  });

  it('a different definition is a different function, so two versions of the code never run each other’s statement', () => {
    const a = new StoredStatement('test_version', ['int[]'], undefined, 'perform 1');
    const b = new StoredStatement('test_version', ['int[]'], undefined, 'perform 2');
    expect(a.functionName).not.toBe(b.functionName);
    expect(a.functionName).toBe(new StoredStatement('test_version', ['int[]'], undefined, 'perform 1').functionName);
  });

  it('a hot route keeps working when its function is dropped under it: the next call creates it again', async () => {
    const { db } = await testServer();
    const m = await createMerchant();
    expect((await m.api.post('/api/clicks', { ref: m.slug })).status).toBe(201);
    const sql = Sql.of(db.orm);
    const functions = await sql.rows<{ signature: string }>(
      "select p.oid::regprocedure::text as signature from pg_proc p where p.proname like 'svc\\_clicks\\_insert\\_%'",
    );
    expect(functions.length).toBeGreaterThan(0);
    for (const { signature } of functions) await sql.rows(`drop function ${signature}`);
    const again = await m.api.post('/api/clicks', { ref: m.slug });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
  });
});
