import type { MikroORM } from '@mikro-orm/postgresql';
import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import { kyselyOf, type Tables } from './database.js';

/**
 * A statement as kysely writes it: a builder (`db.kysely.selectFrom(...)`), the `sql` tag, or
 * one of them compiled once (a CompiledQuery, for a statement built ahead of its calls).
 */
export type Statement<R> = RawBuilder<R> | { compile(): CompiledQuery<R> } | CompiledQuery<R>;

/** A statement written by a library in PostgreSQL's own terms (`$1` placeholders): pg-boss, the rate limiter. */
export interface LibraryResult<R> {
  rows: R[];
  rowCount: number;
}

/** The pool's handle of each ORM's kysely (Db.of). */
const handles = new WeakMap<Kysely<Tables>, Db>();

/**
 * The service's one way to the database: kysely (MikroORM's, on MikroORM's pool), its builder and
 * its `sql` tag for what the builder cannot say. Values are always bound by PostgreSQL, never
 * formatted into the text, and every statement is unnamed (nothing is left on a connection, so
 * any pooler and the embedded database serve it). Outside a transaction each statement takes a
 * pooled connection and returns it; inside one (transaction()), every statement runs on the
 * transaction's connection. Repositories receive it (or the ORM it is taken from) from their
 * module's composition root (services.ts).
 */
export class Db {
  private constructor(
    /** kysely on the pool, or a transaction's (then every statement runs on its connection). */
    readonly kysely: Kysely<Tables>,
    private readonly savepoints = 0,
  ) {}

  /** On the ORM's pool (one handle per ORM); an ORM that has been closed fails every statement (its pool has ended). */
  static of(orm: MikroORM): Db {
    const kysely = kyselyOf(orm);
    let db = handles.get(kysely);
    if (!db) handles.set(kysely, (db = new Db(kysely)));
    return db;
  }

  /** The rows of a statement, run on this handle's connection (a builder made on another kysely included). */
  async rows<R>(statement: Statement<R>): Promise<R[]> {
    const compiled =
      'isRawBuilder' in statement
        ? statement.compile(this.kysely)
        : 'compile' in statement
          ? statement.compile()
          : statement;
    return (await this.kysely.executeQuery(compiled)).rows;
  }

  /** The first row of a statement, if any. */
  async one<R>(statement: Statement<R>): Promise<R | undefined> {
    return (await this.rows(statement))[0];
  }

  /**
   * A library's own statement (`$1` placeholders, as PostgreSQL takes them), passed as it is, on
   * this handle's connection: pg-boss's (jobDatabase) and rate-limiter-flexible's.
   */
  async library<R = Record<string, unknown>>(text: string, values: readonly unknown[] = []): Promise<LibraryResult<R>> {
    const run = async (kysely: Kysely<Tables>) => {
      const result = await kysely.executeQuery<R>(CompiledQuery.raw(text, [...values]));
      return { rows: result.rows, rowCount: Number(result.numAffectedRows ?? result.rows.length) };
    };
    if (this.kysely.isTransaction) return run(this.kysely);
    return this.kysely.connection().execute(async (connection) => {
      try {
        return await run(connection);
      } catch (err) {
        // A library's script may open a transaction of its own and fail inside it (pg-boss installs
        // its schema with `BEGIN; ...; COMMIT`): rolled back here, so that the connection goes
        // back to the pool clean, not stuck in an aborted transaction for the next statement.
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw err;
      }
    });
  }

  /**
   * This handle as the job queue's database handle (pg-boss's `db` option, jobs/queue.ts): inside
   * a transaction, a job inserted through it commits or rolls back with the transaction's rows.
   */
  jobDatabase(): { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> } {
    return { executeSql: (text, values) => this.library(text, values) };
  }

  /**
   * Runs fn in one transaction (kysely's) on one pooled connection, or in a savepoint when this
   * handle is already a transaction's; fn's handle is bound to it. Committed (released) when fn
   * resolves, rolled back when it throws.
   */
  async transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    if (!this.kysely.isTransaction) return this.kysely.transaction().execute((trx) => fn(new Db(trx)));
    const savepoint = sql.raw(`savepoint_${this.savepoints + 1}`);
    await sql`savepoint ${savepoint}`.execute(this.kysely);
    try {
      const result = await fn(new Db(this.kysely, this.savepoints + 1));
      await sql`release savepoint ${savepoint}`.execute(this.kysely);
      return result;
    } catch (err) {
      await sql`rollback to savepoint ${savepoint}`.execute(this.kysely);
      throw err;
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
