import { createHash } from 'node:crypto';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Tables } from './database.js';

/** PostgreSQL's undefined_function: the statement's function is not (yet) in this database. */
const UNDEFINED_FUNCTION = '42883';

/**
 * A hot statement kept in PostgreSQL as a PL/pgSQL function, so that PostgreSQL parses and plans
 * it once per server connection instead of on every call, with nothing on the client's side of a
 * connection: a named prepared statement would do the same, but it lives on one server connection,
 * which neither a transaction pooler (PgBouncer hands each transaction to any server connection)
 * nor the embedded database (one session outliving the pool's connections) keeps. PL/pgSQL caches
 * the plans of a function's statements in whichever server process runs it, invisibly.
 *
 * The function is named by a hash of its definition: every version of the code calls its own
 * function, so instances of two versions side by side (a rolling deploy) never run each other's
 * statement. It is created on first use, by whichever instance gets there first (a transaction-
 * scoped advisory lock, which also holds through a transaction pooler, lets the others wait), and
 * again should anyone drop it. The body is the statement as written, `$1`… naming the function's
 * parameters in the same order.
 */
export class StoredStatement {
  readonly functionName: string;
  private readonly signature: string;
  private readonly definition: string;
  private readonly callText: string;
  private readonly lockKey: string;

  constructor(
    label: string,
    parameterTypes: readonly string[],
    /** `setof <table>`, `table(<columns>)`, or undefined for a statement that returns nothing. */
    returns: string | undefined,
    body: string,
  ) {
    const hash = createHash('sha256')
      .update(JSON.stringify([parameterTypes, returns ?? null, body]))
      .digest('hex')
      .slice(0, 12);
    this.functionName = `svc_${label}_${hash}`;
    this.lockKey = hash;
    const types = parameterTypes.join(', ');
    this.signature = `${this.functionName}(${types})`;
    // use_column: a table(...) result's column names are also PL/pgSQL variables; inside the
    // statement the names mean the query's columns, as they did when it ran on its own.
    this.definition = `create or replace function ${this.functionName}(${types}) returns ${returns ?? 'void'} language plpgsql as $svc$
#variable_conflict use_column
begin
  ${returns === undefined ? `${body};` : `return query ${body};`}
end
$svc$`;
    const parameters = parameterTypes.map((type, i) => `$${i + 1}::${type}`).join(', ');
    this.callText = returns === undefined ? `select ${this.functionName}(${parameters})` : `select * from ${this.functionName}(${parameters})`;
  }

  /**
   * Runs the statement with these parameters (in order) on MikroORM's kysely; creates its
   * function first if this database lacks it.
   */
  async run<T>(kysely: Kysely<Tables>, values: unknown[]): Promise<T[]> {
    const call = CompiledQuery.raw(this.callText, values);
    try {
      return (await kysely.executeQuery<T>(call)).rows;
    } catch (err) {
      if ((err as { code?: unknown }).code !== UNDEFINED_FUNCTION) throw err;
      await this.install(kysely);
      return (await kysely.executeQuery<T>(call)).rows;
    }
  }

  /** Creates the function unless it exists; concurrent callers (other instances too) wait for one another. */
  async install(kysely: Kysely<Tables>): Promise<void> {
    await kysely.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext('svc_stored_statement'), hashtext(${this.lockKey}))`.execute(trx);
      const existing = await sql<{ oid: string | null }>`select to_regprocedure(${this.signature})::text as oid`.execute(trx);
      if (!existing.rows[0]?.oid) await sql.raw(this.definition).execute(trx);
    });
  }
}
