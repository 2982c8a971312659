import type { Knex } from '@mikro-orm/knex';
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';

/** The part of knex's client that lends pooled driver connections. */
interface ConnectionLender {
  acquireConnection(): Promise<pg.Client>;
  releaseConnection(connection: pg.Client): Promise<unknown>;
}

/** `?` placeholders as PostgreSQL's `$1, $2…` (every `?` is one, as for knex), converted once per statement text. */
const positionalTexts = new Map<string, string>();

function positional(query: string): string {
  let text = positionalTexts.get(query);
  if (text === undefined) {
    if (/\?\?|\\\?/.test(query)) throw new Error(`Sql: knex's ?? identifiers and escaped \\? are not supported: ${query}`);
    let n = 0;
    text = query.replace(/\?/g, () => `$${++n}`);
    if (positionalTexts.size < 1000) positionalTexts.set(query, text);
  }
  return text;
}

/**
 * Parameterised SQL on MikroORM's connection pool, for the statements that must be atomic on
 * their own (INSERT ... ON CONFLICT, guarded writes) and for the hot paths, where the ORM's unit
 * of work would only cost time. Placeholders are `?`; values are bound by PostgreSQL ($1…), never
 * formatted into the SQL text. Outside a transaction a statement goes straight to a pooled `pg`
 * connection (knex's query compilation would cost more than the statement on the hot paths);
 * inside one it goes through knex's transaction. It works on the pool directly, not through an
 * EntityManager fork or MikroORM's AsyncLocalStorage contexts, which on Node 20 would put async
 * hooks on every promise.
 */
export class Sql {
  constructor(private readonly knex: Knex | Knex.Transaction) {}

  static of(orm: MikroORM): Sql {
    return new Sql(orm.em.getKnex());
  }

  async rows<T = Record<string, unknown>>(query: string, params: readonly unknown[] = []): Promise<T[]> {
    if (!this.inTransaction && !params.some(Array.isArray)) return (await this.query<T>({ text: positional(query), values: params as unknown[] })).rows;
    // knex expands an array bound to `?` into a list: that case keeps knex's meaning.
    const result = (await this.knex.raw(query, params as readonly Knex.RawBinding[])) as { rows: T[] };
    return result.rows;
  }

  async one<T = Record<string, unknown>>(query: string, params: readonly unknown[] = []): Promise<T | undefined> {
    const rows = await this.rows<T>(query, params);
    return rows[0];
  }

  /**
   * A statement in PostgreSQL's own terms (`$1` placeholders, array parameters as arrays, an
   * optional `name` to prepare it once per connection), on a pooled connection. Not in a transaction.
   */
  async query<T = Record<string, unknown>>(config: pg.QueryConfig): Promise<pg.QueryResult<T & pg.QueryResultRow>> {
    if (this.inTransaction) throw new Error('Sql.query runs outside transactions');
    const lender = this.knex.client as unknown as ConnectionLender;
    const connection = await lender.acquireConnection();
    try {
      return await connection.query<T & pg.QueryResultRow>(config);
    } finally {
      await lender.releaseConnection(connection);
    }
  }

  private get inTransaction(): boolean {
    return (this.knex as Knex.Transaction).isTransaction === true;
  }

  /** Runs fn in one transaction (a savepoint when already inside one); fn's Sql is bound to it. */
  transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    return this.knex.transaction((trx) => fn(new Sql(trx)));
  }
}

export const isUniqueViolation = (err: unknown, constraint?: string): boolean => {
  const e = err as { code?: string; constraint?: string } | null;
  return !!e && e.code === '23505' && (constraint === undefined || e.constraint === constraint);
};

const connectionErrorCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/**
 * The database is down or restarting: the client may retry. PostgreSQL classes 08 (connection),
 * 57P (operator intervention: shutdown, crash) and 53 (insufficient resources).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (connectionErrorCodes.has(code) || code.startsWith('08') || code.startsWith('57P') || code.startsWith('53')) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  if (/Timeout acquiring a connection|Connection terminated|terminating connection|not queryable|Client was closed|connection is closed/i.test(message)) {
    return true;
  }
  return e.cause !== undefined && e.cause !== err && isDatabaseUnavailable(e.cause);
}
