import type { Knex } from '@mikro-orm/knex';
import type { MikroORM } from '@mikro-orm/postgresql';

/**
 * Parameterised SQL on MikroORM's connection pool, for the statements that must be atomic on
 * their own (INSERT ... ON CONFLICT, guarded writes) and for the hot paths, where the ORM's unit
 * of work would only cost time. Placeholders are `?`; values are bound by PostgreSQL ($1…), never
 * formatted into the SQL text. It works on the pool directly, not through an EntityManager fork
 * or MikroORM's AsyncLocalStorage contexts, which on Node 20 would put async hooks on every promise.
 */
export class Sql {
  constructor(private readonly knex: Knex | Knex.Transaction) {}

  static of(orm: MikroORM): Sql {
    return new Sql(orm.em.getKnex());
  }

  async rows<T = Record<string, unknown>>(query: string, params: readonly unknown[] = []): Promise<T[]> {
    const result = (await this.knex.raw(query, params as readonly Knex.RawBinding[])) as { rows: T[] };
    return result.rows;
  }

  async one<T = Record<string, unknown>>(query: string, params: readonly unknown[] = []): Promise<T | undefined> {
    const rows = await this.rows<T>(query, params);
    return rows[0];
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
