import { CompiledQuery, type Kysely } from 'kysely';
import type { Tables } from './database.js';

/**
 * A hot statement built once (from the entities' metadata) and run many times as a plain
 * parameterised statement: its text with `$1…` placeholders, each cast to its type in the text,
 * sent unnamed with fresh values. Nothing is created in the database for it (no function, no
 * named prepared statement): the service needs no CREATE privilege, the schema is exactly what the
 * migrations say, and any pooler or the embedded database serves it.
 */
export class ParameterisedStatement {
  constructor(readonly text: string) {}

  /** Runs the statement with these parameters (in order) on MikroORM's kysely. */
  async run<T>(kysely: Kysely<Tables>, values: unknown[]): Promise<T[]> {
    return (await kysely.executeQuery<T>(CompiledQuery.raw(this.text, values))).rows;
  }
}
