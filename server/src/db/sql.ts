import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Parameterised SQL on the entity manager's connection (and its transaction, if any). Used where
 * a single statement must be atomic (INSERT ... ON CONFLICT, SELECT ... FOR UPDATE) or where the
 * ORM's change-set computation would cost a hot path; placeholders are `?`.
 */
export class Sql {
  constructor(readonly em: EntityManager) {}

  rows<T = Record<string, unknown>>(query: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.em.getConnection().execute<T[]>(query, params as unknown[], 'all', this.em.getTransactionContext());
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
