import type { Sql } from './sql.js';
import { isDatabaseUnavailable } from './sql.js';
import { StoredStatement } from './stored-statement.js';

export interface InsertBatcherOptions<Row> {
  /** Rows per statement at most. */
  maxRows: number;
  /** Statements in flight at once at most; further rows wait for one to return. */
  maxInFlight: number;
  /**
   * Rows with the same key never share a statement: a later one waits for the next. For writes
   * that decide on a row's observed state (one guarded write per customer and statement).
   */
  exclusiveKey?: (row: Row) => string;
}

/**
 * The batching of the hot inserts (clicks, customers, conversions by click): up to 4 statements
 * of up to 200 rows in flight per kind, which leaves the pool's other connections to the rest.
 */
export const WRITE_BATCHING = { maxRows: 200, maxInFlight: 4 } as const;

interface Pending<Row, Result> {
  row: Row;
  resolve: (result: Result) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit in the application: single-row inserts of one kind, arriving from concurrent
 * requests, leave as multi-row statements. Rows added during one turn of the event loop go
 * together (no timer: a lone row is sent on the next turn), at most `maxRows` per statement and
 * `maxInFlight` statements at a time; rows arriving while every slot is busy go in the next
 * statement. One statement is one round trip, one transaction and one WAL flush for all its rows,
 * and PostgreSQL checks each foreign key once per statement rather than once per row.
 *
 * Each caller's promise settles when its own row's statement has committed, so a request is
 * acknowledged only once its row is stored. If a multi-row statement fails for a reason other
 * than the database being unavailable, its rows are written again one by one, so that one bad
 * row fails only its own request.
 */
export class InsertBatcher<Row, Result> {
  private queue: Pending<Row, Result>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly write: (rows: Row[]) => Promise<Result[]>,
    private readonly options: InsertBatcherOptions<Row>,
  ) {}

  add(row: Row): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.takeBatch();
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    }
  }

  /** The next rows in arrival order, up to maxRows, at most one per exclusive key. */
  private takeBatch(): Pending<Row, Result>[] {
    const { maxRows, exclusiveKey } = this.options;
    if (!exclusiveKey) return this.queue.splice(0, maxRows);
    const batch: Pending<Row, Result>[] = [];
    const waiting: Pending<Row, Result>[] = [];
    const keys = new Set<string>();
    for (const pending of this.queue) {
      const key = exclusiveKey(pending.row);
      if (batch.length < maxRows && !keys.has(key)) {
        keys.add(key);
        batch.push(pending);
      } else {
        waiting.push(pending);
      }
    }
    this.queue = waiting;
    return batch;
  }

  private async send(batch: Pending<Row, Result>[]): Promise<void> {
    try {
      const results = await this.write(batch.map((pending) => pending.row));
      batch.forEach((pending, i) => pending.resolve(results[i]));
    } catch (err) {
      if (batch.length === 1 || isDatabaseUnavailable(err)) {
        for (const pending of batch) pending.reject(err);
        return;
      }
      await Promise.all(
        batch.map(async (pending) => {
          try {
            pending.resolve((await this.write([pending.row]))[0]);
          } catch (rowError) {
            pending.reject(rowError);
          }
        }),
      );
    }
  }
}

/** Rows (values in column order) as one array per column, the parameters of an unnest. */
export function columnArrays(rows: readonly (readonly unknown[])[], columns: number): unknown[][] {
  return Array.from({ length: columns }, (_, column) => rows.map((row) => row[column]));
}

export interface UnnestColumn {
  name: string;
  /** The column's PostgreSQL type, for the array parameter (`uuid`, `text`, `timestamptz`…). */
  type: string;
}

/** `$1::uuid[], $2::text[], …`: the array parameters of an unnest over these columns. */
export function unnestParameters(columns: readonly UnnestColumn[]): string {
  return columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ');
}

/**
 * A multi-row INSERT whose text does not depend on the number of rows: one array parameter per
 * column, unnested into rows, kept in PostgreSQL as a function so that it is planned once per
 * server connection (db/stored-statement.ts), never as a named prepared statement.
 * `suffix` follows the SELECT (ON CONFLICT …, RETURNING *: then the inserted rows are returned).
 * Rows are inserted in the order of `orderBy` when given: concurrent statements that insert the
 * same unique keys then take them in the same order, and wait for each other instead of
 * deadlocking.
 */
export class UnnestInsert<Row extends readonly unknown[]> {
  private readonly statement: StoredStatement;

  constructor(
    table: string,
    private readonly columns: readonly UnnestColumn[],
    options: { suffix?: string; orderBy?: string } = {},
  ) {
    const names = columns.map((c) => c.name).join(', ');
    const order = options.orderBy ? ` order by ${options.orderBy}` : '';
    const suffix = options.suffix ?? '';
    const text = `insert into ${table} (${names}) select * from unnest(${unnestParameters(columns)}) as input_rows(${names})${order} ${suffix}`.trim();
    const returnsRows = /returning \*$/i.test(suffix.trim());
    this.statement = new StoredStatement(`${table}_insert`, columns.map((c) => `${c.type}[]`), returnsRows ? `setof ${table}` : undefined, text);
  }

  /** Inserts the rows (values in column order); returns what the suffix's RETURNING returns. */
  async run<T = Record<string, unknown>>(sql: Sql, rows: readonly Row[]): Promise<T[]> {
    return this.statement.run<T>(sql, columnArrays(rows, this.columns.length));
  }

  /**
   * For a statement `… ON CONFLICT DO NOTHING RETURNING *` whose first column is `id`: each input
   * row's inserted row, in input order, or undefined where the conflict skipped it.
   */
  async insertedPerRow<T extends { id: string }>(sql: Sql, rows: readonly Row[]): Promise<(T | undefined)[]> {
    const inserted = new Map((await this.run<T>(sql, rows)).map((row) => [row.id, row]));
    return rows.map((row) => inserted.get(row[0] as string));
  }
}
