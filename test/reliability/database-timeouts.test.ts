import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { connectOrm, ormOptions, type DatabaseTimeouts } from '../../server/src/db/orm.js';
import { errorResponse } from '../../server/src/http/error-handler.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { describeWithPostgres } from './support/service.js';

describe('database timeouts: configuration', () => {
  it('defaults to a few seconds each, the client waiting 1 s longer than PostgreSQL lets a statement run', () => {
    const config = loadConfig({});
    expect({
      statement: config.DB_STATEMENT_TIMEOUT_MS,
      query: config.DB_QUERY_TIMEOUT_MS,
      acquire: config.DB_ACQUIRE_TIMEOUT_MS,
      connect: config.DB_CONNECT_TIMEOUT_MS,
    }).toEqual({ statement: 5_000, query: 6_000, acquire: 5_000, connect: 3_000 });
    expect(loadConfig({ DB_STATEMENT_TIMEOUT_MS: '30000' }).DB_QUERY_TIMEOUT_MS).toBe(31_000);
    // Server-side bound off (PgBouncer without the parameter): the client-side bound remains.
    expect(loadConfig({ DB_STATEMENT_TIMEOUT_MS: '0' }).DB_QUERY_TIMEOUT_MS).toBe(6_000);
  });

  it('refuses a client-side bound that would fire before PostgreSQL cancels the statement', () => {
    expect(() => loadConfig({ DB_STATEMENT_TIMEOUT_MS: '5000', DB_QUERY_TIMEOUT_MS: '5000' })).toThrow(
      'Invalid configuration: DB_QUERY_TIMEOUT_MS: must be longer than DB_STATEMENT_TIMEOUT_MS',
    );
    expect(loadConfig({ DB_STATEMENT_TIMEOUT_MS: '0', DB_QUERY_TIMEOUT_MS: '2000' }).DB_QUERY_TIMEOUT_MS).toBe(2_000);
  });
});

/**
 * The two statement bounds on a real PostgreSQL (the embedded one ignores start-up parameters), on
 * a pool of one connection, so that "the next statement" runs on whatever that statement left.
 */
describeWithPostgres('database timeouts: a statement that runs too long', () => {
  let db: TestDatabase;
  const orms: MikroORM[] = [];
  const connect = async (timeouts: Partial<DatabaseTimeouts>) => {
    const orm = await connectOrm(ormOptions(db.url, 1, { statementMs: 0, queryMs: 0, acquireMs: 5_000, connectMs: 5_000, ...timeouts }));
    orms.push(orm);
    return orm.em.getConnection();
  };
  const failure = (promise: Promise<unknown>) => promise.then(() => new Error('the statement succeeded'), (err: unknown) => err);

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const orm of orms) await orm.close(true);
    await db?.stop();
  });

  it('is cancelled by PostgreSQL at DB_STATEMENT_TIMEOUT_MS, answered 503 + Retry-After, and its connection serves the next statement', async () => {
    const connection = await connect({ statementMs: 300, queryMs: 10_000 });
    expect(await connection.execute('show statement_timeout')).toEqual([{ statement_timeout: '300ms' }]);
    const err = await failure(connection.execute('select pg_sleep(5)'));
    expect((err as Error).message).toMatch(/canceling statement due to statement timeout/);
    expect(errorResponse(err)).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    expect(await connection.execute('select 1 as ok')).toEqual([{ ok: 1 }]);
  });

  it('without the server-side bound, fails at DB_QUERY_TIMEOUT_MS and the next statement gets a fresh connection, not the busy one', async () => {
    const connection = await connect({ statementMs: 0, queryMs: 300 });
    const err = await failure(connection.execute('select pg_sleep(5)'));
    expect((err as Error).message).toMatch(/Query read timeout$/);
    expect(errorResponse(err)).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    // Handed the connection still running pg_sleep, this would queue behind it and time out too.
    expect(await connection.execute('select 1 as ok')).toEqual([{ ok: 1 }]);
  });
});
