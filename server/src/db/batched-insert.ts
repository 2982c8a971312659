import type { Sql } from './sql.js';
import { isDatabaseUnavailable } from './sql.js';

export interface InsertBatcherOptions {
  /** Rows per statement at most. */
  maxRows: number;
  /** Statements in flight at once at most; further rows wait for one to return. */
  maxInFlight: number;
}

/**
 * The batching of the hot inserts (clicks, customers, conversions by click): up to 4 statements
 * of up to 200 rows in flight per kind, which leaves the pool's other connections to the rest.
 */
export const WRITE_BATCHING: InsertBatcherOptions = { maxRows: 200, maxInFlight: 4 };

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
    private readonly options: InsertBatcherOptions,
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
      const batch = this.queue.splice(0, this.options.maxRows);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    }
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

export interface UnnestColumn {
  name: string;
  /** The column's PostgreSQL type, for the array parameter (`uuid`, `text`, `timestamptz`…). */
  type: string;
}

/**
 * A multi-row INSERT whose text does not depend on the number of rows: one array parameter per
 * column, unnested into rows, so PostgreSQL can prepare it once per connection (`name`).
 * `suffix` follows the SELECT (ON CONFLICT …, RETURNING …).
 */
export class UnnestInsert<Row extends readonly unknown[]> {
  private readonly text: string;

  constructor(
    private readonly name: string,
    table: string,
    private readonly columns: readonly UnnestColumn[],
    suffix = '',
  ) {
    const names = columns.map((c) => c.name).join(', ');
    const arrays = columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ');
    this.text = `insert into ${table} (${names}) select * from unnest(${arrays}) ${suffix}`.trim();
  }

  /** Inserts the rows (values in column order); returns what the suffix's RETURNING returns. */
  async run<T = Record<string, unknown>>(sql: Sql, rows: readonly Row[]): Promise<T[]> {
    const values = this.columns.map((_, column) => rows.map((row) => row[column]));
    return (await sql.query<T>({ name: this.name, text: this.text, values })).rows;
  }
}
