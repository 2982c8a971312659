import type { MikroORM } from '@mikro-orm/postgresql';
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';
import { poolOf } from './database.js';

/** A statement without per-connection state: no `name` (see Sql.query). */
export type UnnamedQuery = Omit<pg.QueryConfig, 'name'> & { name?: never };

/** `?` placeholders as PostgreSQL's `$1, $2…` (every `?` is one), converted once per statement text. */
const positionalTexts = new Map<string, string>();

function positional(query: string): string {
  let text = positionalTexts.get(query);
  if (text === undefined) {
    if (/\?\?|\\\?/.test(query)) throw new Error(`Sql: ?? identifiers and escaped \\? are not supported: ${query}`);
    let n = 0;
    text = query.replace(/\?/g, () => `$${++n}`);
    if (positionalTexts.size < 1000) positionalTexts.set(query, text);
  }
  return text;
}

/**
 * Parameterised SQL on MikroORM's connection pool (the one its kysely runs on), for the statements
 * that must be atomic on their own (INSERT ... ON CONFLICT, guarded writes) and transactions of a
 * few statements, where the ORM's unit of work would only cost time. Placeholders are `?`; values
 * are bound by PostgreSQL ($1…), never formatted into the SQL text. Every statement goes straight
 * to a pooled `pg` connection, unnamed and with no session state left behind (see query()). It
 * works on the pool directly, not through an EntityManager fork or MikroORM's AsyncLocalStorage
 * contexts. The hot and batched statements are built with kysely instead (db/batched-insert.ts).
 */
export class Sql {
  private constructor(
    private readonly pool: pg.Pool,
    /** Set inside a transaction: every statement runs on this connection. */
    private readonly connection?: pg.PoolClient,
    private readonly savepoints = 0,
  ) {}

  /** On the ORM's pool; an ORM that has been closed fails every statement (its pool has ended). */
  static of(orm: MikroORM): Sql {
    return new Sql(poolOf(orm));
  }

  async rows<T = Record<string, unknown>>(query: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await this.run<T>({ text: positional(query), values: params as unknown[] })).rows;
  }

  async one<T = Record<string, unknown>>(query: string, params: readonly unknown[] = []): Promise<T | undefined> {
    const rows = await this.rows<T>(query, params);
    return rows[0];
  }

  /**
   * A statement built with kysely (db/database.ts, kyselyOf), typed by its builder, run here: on
   * this transaction's connection inside one. Only the compiled text and parameters are used.
   */
  async execute<R>(query: { compile(): CompiledQuery<R> }): Promise<R[]> {
    const { sql, parameters } = query.compile();
    return (await this.run<R>({ text: sql, values: parameters as unknown[] })).rows;
  }

  /**
   * A statement in PostgreSQL's own terms (`$1` placeholders, array parameters as arrays), on a
   * pooled connection. Not in a transaction. Never named: a named prepared statement lives on one
   * server connection, and neither a transaction pooler (PgBouncer hands each transaction to any
   * server connection) nor the embedded database (one session that outlives every client
   * connection the pool opens and drops) keeps that promise, so the type leaves `name` out.
   */
  async query<T = Record<string, unknown>>(config: UnnamedQuery): Promise<pg.QueryResult<T & pg.QueryResultRow>> {
    if (this.connection) throw new Error('Sql.query runs outside transactions');
    return this.run<T>(config);
  }

  /**
   * This Sql as the job queue's database handle (pg-boss's `db` option, jobs/queue.ts): inside a
   * transaction, a job inserted through it commits or rolls back with the transaction's rows.
   * Statements are pg-boss's own, in PostgreSQL's `$1` terms, passed as they are.
   */
  jobDatabase(): { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> } {
    return { executeSql: (text, values) => this.run({ text, values: values ?? [] }) };
  }

  private async run<T>(config: UnnamedQuery): Promise<pg.QueryResult<T & pg.QueryResultRow>> {
    if (this.connection) return this.connection.query<T & pg.QueryResultRow>(config);
    const connection = await this.pool.connect();
    try {
      return await connection.query<T & pg.QueryResultRow>(config);
    } finally {
      connection.release();
    }
  }

  /**
   * Runs fn in one transaction on one pooled connection (a savepoint when already inside one);
   * fn's Sql is bound to it. Committed when fn resolves, rolled back when it throws.
   */
  async transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    if (this.connection) {
      const savepoint = `sql_savepoint_${this.savepoints + 1}`;
      await this.connection.query(`savepoint ${savepoint}`);
      try {
        const result = await fn(new Sql(this.pool, this.connection, this.savepoints + 1));
        await this.connection.query(`release savepoint ${savepoint}`);
        return result;
      } catch (err) {
        await this.connection.query(`rollback to savepoint ${savepoint}`);
        throw err;
      }
    }
    const connection = await this.pool.connect();
    // A connection that cannot even roll back is in an unknown state: released with the error,
    // pg-pool closes it instead of lending it again.
    let broken: Error | undefined;
    try {
      await connection.query('begin');
      let result: T;
      try {
        result = await fn(new Sql(this.pool, connection));
      } catch (err) {
        await connection.query('rollback').catch((rollbackError: unknown) => {
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        });
        throw err;
      }
      await connection.query('commit');
      return result;
    } finally {
      connection.release(broken);
    }
  }
}

/**
 * Whether PostgreSQL's `actual` constraint name is `name`. On Citus the error comes from a worker,
 * which names the shard's copy of the constraint: `<name>_<shard id>`, in its message only (the
 * coordinator passes on no constraint field).
 */
export const isConstraintNamed = (actual: string | undefined, name: string): boolean =>
  actual === name ||
  (actual !== undefined && actual.startsWith(`${name}_`) && /^\d+$/.test(actual.slice(name.length + 1)));

export const isUniqueViolation = (err: unknown, constraint?: string): boolean => {
  const e = err as { code?: string; constraint?: string; message?: string } | null;
  if (!e || e.code !== '23505') return false;
  const named = e.constraint ?? /constraint "([^"]+)"/.exec(e.message ?? '')?.[1];
  return constraint === undefined || isConstraintNamed(named, constraint);
};

const connectionErrorCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/**
 * The database is down, restarting or not answering: the client may retry. PostgreSQL classes 08
 * (connection), 57P (operator intervention: shutdown, crash) and 53 (insufficient resources), and
 * the client-side bounds (no connection in time, no answer in time). A statement PostgreSQL itself
 * cancelled for its duration is not one: see databaseTimeoutOf.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (connectionErrorCodes.has(code) || code.startsWith('08') || code.startsWith('57P') || code.startsWith('53'))
    return true;
  const message = typeof e.message === 'string' ? e.message : '';
  if (
    /Timeout acquiring a connection|timeout exceeded when trying to connect|Cannot use a pool after calling end|Connection terminated|terminating connection|not queryable|Client was closed|connection is closed|Query read timeout|timeout expired/i.test(
      message,
    )
  ) {
    return true;
  }
  return e.cause !== undefined && e.cause !== err && isDatabaseUnavailable(e.cause);
}

/** What PostgreSQL cancelled a statement for: its duration (statement_timeout) or its wait for a lock (lock_timeout). */
export type DatabaseTimeout = 'statement timeout' | 'lock timeout';

/**
 * The database answered, but cancelled the statement: SQLSTATE 57014 with "statement timeout" (it
 * ran past statement_timeout, DB_STATEMENT_TIMEOUT_MS) or 55P03 (it waited past lock_timeout for a
 * lock, or a NOWAIT lock was held). The database is up; the client may retry.
 */
export function databaseTimeoutOf(err: unknown): DatabaseTimeout | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown };
  const message = typeof e.message === 'string' ? e.message : '';
  if (e.code === '55P03' || /due to lock timeout/i.test(message)) return 'lock timeout';
  if (e.code === '57014' ? !/due to user request/i.test(message) : /due to statement timeout/i.test(message))
    return 'statement timeout';
  return e.cause !== undefined && e.cause !== err ? databaseTimeoutOf(e.cause) : undefined;
}
