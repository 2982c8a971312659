import type { EntityManager } from '@mikro-orm/postgresql';
import type { Knex } from '@mikro-orm/knex';

/**
 * Parameterised SQL on the entity manager's connection (and its transaction, if any). Used where
 * a single statement must be atomic (INSERT ... ON CONFLICT, SELECT ... FOR UPDATE) or where the
 * ORM's change-set computation would cost a hot path; placeholders are `?`.
 */
export class Sql {
  constructor(readonly em: EntityManager) {}

  /**
   * Sent as a parameterised query (`?` become `$1…` bound by PostgreSQL), on the entity manager's
   * pool and transaction. MikroORM's own `execute` would inline the escaped values into the SQL
   * text; binding them keeps values out of the SQL entirely and saves the escaping work.
   */
  async rows<T = Record<string, unknown>>(query: string, params: readonly unknown[] = []): Promise<T[]> {
    const raw = this.em.getKnex().raw(query, params as readonly Knex.RawBinding[]);
    const transaction = this.em.getTransactionContext();
    if (transaction) raw.transacting(transaction);
    const result = (await raw) as { rows: T[] };
    return result.rows;
  }

  async one<T = Record<string, unknown>>(query: string, params: readonly unknown[] = []): Promise<T | undefined> {
    const rows = await this.rows<T>(query, params);
    return rows[0];
  }

  /** Runs fn in one transaction; fn's Sql is bound to it. */
  transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    return this.em.transactional((tem) => fn(new Sql(tem)));
  }
}

export const isUniqueViolation = (err: unknown, constraint?: string): boolean => {
  const e = err as { code?: string; constraint?: string } | null;
  return !!e && e.code === '23505' && (constraint === undefined || e.constraint === constraint);
};
