import type { MikroORM } from '@mikro-orm/postgresql';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import pino from 'pino';
import { createApp, type AppDeps } from '../../server/src/app.js';
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
    const orm = await connectOrm(
      ormOptions(db.url, 1, { statementMs: 0, queryMs: 0, acquireMs: 5_000, connectMs: 5_000, ...timeouts }),
    );
    orms.push(orm);
    return orm.em.getConnection();
  };
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => new Error('the statement succeeded'),
      (err: unknown) => err,
    );

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
    // Answered as what it is: the database answered, and cancelled the statement for its duration.
    expect(errorResponse(err)).toEqual({
      status: 503,
      message: 'The database took too long to answer; safe to retry',
      headers: { 'Retry-After': '1' },
      log: {
        level: 'warn',
        msg: 'database statement timeout: PostgreSQL cancelled a statement that ran past statement_timeout (DB_STATEMENT_TIMEOUT_MS)',
      },
    });
    expect(await connection.execute('select 1 as ok')).toEqual([{ ok: 1 }]);
  });

  it('without the server-side bound, fails at DB_QUERY_TIMEOUT_MS and the next statement gets a fresh connection, not the busy one', async () => {
    const connection = await connect({ statementMs: 0, queryMs: 300 });
    const err = await failure(connection.execute('select pg_sleep(5)'));
    expect((err as Error).message).toMatch(/Query read timeout$/);
    // No answer at all: the database is unavailable as far as the service can tell.
    expect(errorResponse(err)).toEqual({
      status: 503,
      message: 'Service temporarily unavailable; safe to retry',
      headers: { 'Retry-After': '1' },
      log: { level: 'warn', msg: 'database unavailable' },
    });
    // Handed the connection still running pg_sleep, this would queue behind it and time out too.
    expect(await connection.execute('select 1 as ok')).toEqual([{ ok: 1 }]);
  });

  it('a statement that waited past lock_timeout (55P03) is answered 503 "took too long" with Retry-After, logged as a lock timeout, not as "database unavailable"', async () => {
    const holder = new pg.Client({ connectionString: db.url });
    const waiter = new pg.Client({ connectionString: db.url });
    await holder.connect();
    await waiter.connect();
    try {
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock(72620113)');
      await waiter.query('begin');
      await waiter.query(`set local lock_timeout = '200ms'`);
      const err = await failure(waiter.query('select pg_advisory_xact_lock(72620113)'));
      expect((err as { code?: string }).code).toBe('55P03');
      expect((err as Error).message).toMatch(/canceling statement due to lock timeout/);
      expect(errorResponse(err)).toEqual({
        status: 503,
        message: 'The database took too long to answer; safe to retry',
        headers: { 'Retry-After': '1' },
        log: {
          level: 'warn',
          msg: 'database lock timeout: PostgreSQL cancelled a statement that waited too long for a lock (lock_timeout)',
        },
      });
    } finally {
      await holder.end();
      await waiter.end();
    }
  });

  it('a request whose statement runs past DB_STATEMENT_TIMEOUT_MS (here: waiting for a row lock) is answered 503 "took too long" with Retry-After, and logged naming the timeout', async () => {
    const orm = await connectOrm(
      ormOptions(db.url, 3, { statementMs: 500, queryMs: 5_000, acquireMs: 5_000, connectMs: 5_000 }),
    );
    orms.push(orm);
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const adminToken = 'timeouts-admin-token-0123456789abcdef';
    const { listener } = createApp({
      orm,
      logger,
      config: { ADMIN_TOKEN: adminToken, PUBLIC_BASE_URL: 'http://127.0.0.1' } as AppDeps['config'],
    });
    const server: Server = createServer(listener).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const holder = new pg.Client({ connectionString: db.url });
    try {
      const created = await fetch(`${base}/admin/organizations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Timeouts' }),
      });
      expect(created.status).toBe(201);
      const { data } = (await created.json()) as { data: { api_key: string; organization: { id: string } } };
      // Another transaction holds the organization's row: the update waits, and PostgreSQL cancels it at 500 ms.
      await holder.connect();
      await holder.query('begin');
      await holder.query('select 1 from organizations where id = $1 for update', [data.organization.id]);
      const res = await fetch(`${base}/api/data-retention`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${data.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ click_retention_days: 30 }),
      });
      expect({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }).toEqual({
        status: 503,
        retryAfter: '1',
        body: { success: false, message: 'The database took too long to answer; safe to retry' },
      });
      expect(lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([
        'database statement timeout: PostgreSQL cancelled a statement that ran past statement_timeout (DB_STATEMENT_TIMEOUT_MS)',
      ]);
    } finally {
      await holder.end();
      server.close();
    }
  });
});
