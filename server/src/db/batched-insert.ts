import type { MikroORM } from '@mikro-orm/postgresql';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { LimitFunction } from 'p-limit';
import {
  batchedWritesOf,
  kyselyOf,
  metadataOf,
  type ColumnOf,
  type Entity,
  type NewRow,
  type StoredRow,
  type TableOf,
} from './database.js';
import { Db, databaseTimeoutOf, isDatabaseUnavailable } from './sql.js';

export interface InsertBatcherOptions<Row> {
  /** Rows per statement at most. */
  maxRows: number;
  /**
   * Statements in flight at once at most; further rows wait for one to return. A statement beside
   * one already in flight is sent only for a full one (maxRows waiting): see InsertBatcher.
   */
  maxInFlight: number;
  /**
   * Rows with the same key never share a statement: a later one waits for the next. For writes
   * that decide on a row's observed state (one guarded write per customer and statement).
   */
  exclusiveKey?: (row: Row) => string;
  /**
   * Only rows with the same key share a statement (the first waiting row's; the others wait for a
   * later one): the organization, so that each statement is one organization's, one shard's on
   * Citus (docs/scaling.md), and its outbox row names that organization.
   */
  groupKey?: (row: Row) => string;
  /**
   * Shared by every batcher of one database (db/database.ts, batchedWritesOf): each statement,
   * a row-by-row retry included, runs only within it, so batching never holds more connections
   * than it leaves to the rest of the service.
   */
  connections?: LimitFunction;
}

/**
 * The batching of the hot inserts (clicks, customers, conversions by click and by customer):
 * statements of up to 200 rows per kind, one at a time unless full ones wait, then up to 4, run
 * within the connections every batcher shares (writeBatching).
 */
export const WRITE_BATCHING = { maxRows: 200, maxInFlight: 4 } as const;

/** WRITE_BATCHING within this database's shared bound on batched-write connections. */
export const writeBatching = (orm: MikroORM) => ({ ...WRITE_BATCHING, connections: batchedWritesOf(orm) });

interface Pending<Row, Result> {
  row: Row;
  resolve: (result: Result) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit in the application: single-row inserts of one kind, arriving from concurrent
 * requests, leave as multi-row statements. Rows added during one turn of the event loop go
 * together (no timer: a lone row is sent on the next turn), at most `maxRows` per statement.
 * While a statement is in flight, the rows that arrive wait for it and leave together in the next
 * one; a further statement beside it (up to `maxInFlight`) is sent only for a full statement's
 * worth of waiting rows. One statement is one round trip, one transaction and one WAL flush for all
 * its rows, and PostgreSQL plans and starts it once: the fewer, larger statements cost less per row
 * (measured with `npm run bench`: a second, third or fourth statement of a few rows
 * in flight raised the CPU per conversion, node and PostgreSQL, by about a fifth). Under a load
 * that fills statements, they run side by side.
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

  /** Whether a statement may be sent now: none in flight and rows waiting, or a full one waiting and a slot free. */
  private maySend(): boolean {
    if (this.queue.length === 0 || this.inFlight >= this.options.maxInFlight) return false;
    return this.inFlight === 0 || this.queue.length >= this.options.maxRows;
  }

  private schedule(): void {
    if (this.scheduled || !this.maySend()) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.maySend()) {
      const batch = this.takeBatch();
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    }
  }

  /** The next rows in arrival order, up to maxRows, of the first one's group, at most one per exclusive key. */
  private takeBatch(): Pending<Row, Result>[] {
    const { maxRows, exclusiveKey, groupKey } = this.options;
    if (!exclusiveKey && !groupKey) return this.queue.splice(0, maxRows);
    const batch: Pending<Row, Result>[] = [];
    const waiting: Pending<Row, Result>[] = [];
    const keys = new Set<string>();
    const group = groupKey?.(this.queue[0].row);
    for (const pending of this.queue) {
      const key = exclusiveKey?.(pending.row);
      if (
        batch.length < maxRows &&
        (key === undefined || !keys.has(key)) &&
        (groupKey === undefined || groupKey(pending.row) === group)
      ) {
        if (key !== undefined) keys.add(key);
        batch.push(pending);
      } else {
        waiting.push(pending);
      }
    }
    this.queue = waiting;
    return batch;
  }

  private async send(batch: Pending<Row, Result>[]): Promise<void> {
    const write = (rows: Row[]) =>
      this.options.connections ? this.options.connections(() => this.write(rows)) : this.write(rows);
    try {
      const results = await write(batch.map((pending) => pending.row));
      batch.forEach((pending, i) => pending.resolve(results[i]));
    } catch (err) {
      if (batch.length === 1 || isDatabaseUnavailable(err) || databaseTimeoutOf(err)) {
        for (const pending of batch) pending.reject(err);
        return;
      }
      await Promise.all(
        batch.map(async (pending) => {
          try {
            pending.resolve((await write([pending.row]))[0]);
          } catch (rowError) {
            pending.reject(rowError);
          }
        }),
      );
    }
  }
}

/** A column of an unnest: its name, and its PostgreSQL type for the array parameter (`uuid`, `text`, `timestamptz`…). */
export interface UnnestColumn {
  name: string;
  type: string;
}

/**
 * The columns new rows of this entity provide: the keys of the first row (rows of one batch are
 * built by one function, so all alike), in the entity's property order, each with its column type
 * from the entity's metadata, without a type modifier (`numeric(10,2)` → `numeric`: the array
 * parameter must not round what the column itself would store).
 */
export function providedColumns(orm: MikroORM, entity: Entity, row: object): UnnestColumn[] {
  const columns: UnnestColumn[] = [];
  for (const property of metadataOf(orm, entity).props) {
    const [name] = property.fieldNames;
    if (name === undefined || !(name in row)) continue;
    columns.push({ name, type: columnTypeOf(orm, entity, name) });
  }
  const unknown = Object.keys(row).filter((key) => !columns.some((c) => c.name === key));
  if (unknown.length > 0) throw new Error(`${entity.meta.className}: no such columns: ${unknown.join(', ')}`);
  return columns;
}

/** A column's PostgreSQL type from the entity's metadata, without a type modifier (`numeric(10,2)` → `numeric`). */
export function columnTypeOf(orm: MikroORM, entity: Entity, column: string): string {
  const property = metadataOf(orm, entity).props.find((p) => p.fieldNames[0] === column);
  const type = property?.columnTypes[0];
  if (type === undefined) throw new Error(`${entity.meta.className}: no column type for ${column} in the metadata`);
  return type.replace(/\(.*\)$/, '');
}

/** Rows as one array per column, the parameters of an unnest; every row must provide exactly these columns. */
export function columnArrays(rows: readonly object[], columns: readonly UnnestColumn[]): unknown[][] {
  for (const row of rows) {
    if (Object.keys(row).length !== columns.length || !columns.every((c) => c.name in row)) {
      throw new Error(`rows of one batch must provide the same columns (${columns.map((c) => c.name).join(', ')})`);
    }
  }
  return columns.map((column) => rows.map((row) => (row as Record<string, unknown>)[column.name] ?? null));
}

/**
 * One array parameter of a statement compiled once (withValues gives it its value at each run):
 * `$n::uuid[]`, numbered by kysely in the order the parameters appear in the statement.
 */
export const arrayParameter = (type: string) => sql`${null}::${sql.raw(type)}[]`;

/** `unnest($1::uuid[]) as id, unnest($2::text[]) as cookie_id, …`: parameter i is column i's array. */
export function unnestSelections(columns: readonly UnnestColumn[]) {
  return columns.map((column) => sql`unnest(${arrayParameter(column.type)})`.as(column.name));
}

/**
 * A hot statement compiled once by kysely (its text with `$1…` placeholders, no compile per call),
 * run with these values for its parameters, in their order. Nothing is created in the database for
 * it (no function, no named prepared statement): any pooler and the embedded database serve it.
 */
export function withValues<R>(compiled: CompiledQuery<unknown>, values: readonly unknown[]): CompiledQuery<R> {
  if (values.length !== compiled.parameters.length)
    throw new Error(`${compiled.parameters.length} parameters expected, ${values.length} given`);
  return { ...compiled, parameters: values };
}

export interface UnnestInsertOptions<E extends Entity> {
  /** ON CONFLICT (these columns) DO NOTHING. */
  skipConflictsOn?: readonly ColumnOf<E>[];
  /**
   * Rows are inserted in this column's order: concurrent statements that insert the same unique
   * keys then take them in the same order, and wait for each other instead of deadlocking.
   */
  orderBy?: ColumnOf<E>;
  /** RETURNING *: the inserted rows are returned. */
  returning?: boolean;
  /**
   * Other writes of the same statement, given the name of the CTE that holds the inserted rows
   * and SQL naming their organization (a parameter: rows of one statement are one
   * organization's, InsertBatcher's groupKey): the bodies of data-modifying CTEs (an outbox row
   * per batch: modules/events/outbox.ts; what the rows count in the reports:
   * modules/reports/report-contributions.ts).
   */
  alsoWrite?: (inserted: string, organization: string) => readonly string[];
}

/**
 * A multi-row INSERT of an entity's rows whose text does not depend on the number of rows: one
 * array parameter per column, unnested into rows. It is built with MikroORM's kysely from the
 * entity's metadata (the columns are those the rows provide, typed from the entity definition),
 * compiled once, and run with the rows' arrays as its parameters (withValues).
 */
export class UnnestInsert<E extends Entity> {
  /** One statement per set of columns provided (in practice, one per call site). */
  private readonly statements = new Map<string, { columns: UnnestColumn[]; statement: CompiledQuery<unknown> }>();

  constructor(
    private readonly entity: E,
    private readonly options: UnnestInsertOptions<E> = {},
  ) {}

  /** Inserts the rows; returns the inserted rows with `returning`, else nothing. */
  async run(orm: MikroORM, rows: readonly NewRow<TableOf<E>>[]): Promise<StoredRow<TableOf<E>>[]> {
    if (rows.length === 0) return [];
    const { columns, statement } = this.statementFor(orm, rows[0]);
    const values: unknown[] = columnArrays(rows, columns);
    if (this.options.alsoWrite && statement.parameters.length > columns.length) {
      const organizationId = (rows[0] as { organization_id?: string }).organization_id;
      if (rows.some((row) => (row as { organization_id?: string }).organization_id !== organizationId))
        throw new Error('UnnestInsert: rows of a statement with alsoWrite must be one organization’s');
      values.push(organizationId);
    }
    return Db.of(orm).rows(withValues<StoredRow<TableOf<E>>>(statement, values));
  }

  /**
   * With `skipConflictsOn` and `returning`: each input row's inserted row, in input order, or
   * undefined where the conflict skipped it.
   */
  async insertedPerRow(
    orm: MikroORM,
    rows: readonly (NewRow<TableOf<E>> & { id: string })[],
  ): Promise<(StoredRow<TableOf<E>> | undefined)[]> {
    const inserted = new Map((await this.run(orm, rows)).map((row) => [(row as { id: string }).id, row]));
    return rows.map((row) => inserted.get(row.id));
  }

  private statementFor(orm: MikroORM, row: object): { columns: UnnestColumn[]; statement: CompiledQuery<unknown> } {
    const key = Object.keys(row).join(',');
    let entry = this.statements.get(key);
    if (!entry) {
      const columns = providedColumns(orm, this.entity, row);
      const table = metadataOf(orm, this.entity).tableName;
      const { skipConflictsOn, orderBy, returning } = this.options;
      const db = kyselyOf(orm) as unknown as Kysely<Record<string, Record<string, unknown>>>;
      let rowsInOrder = db.selectNoFrom(unnestSelections(columns));
      if (orderBy) rowsInOrder = rowsInOrder.orderBy(sql.ref(orderBy));
      let insert = db
        .insertInto(table)
        .columns(columns.map((c) => c.name))
        .expression(rowsInOrder);
      if (skipConflictsOn) insert = insert.onConflict((conflict) => conflict.columns([...skipConflictsOn]).doNothing());
      const written = returning || this.options.alsoWrite ? insert.returningAll() : insert;
      let statement: CompiledQuery<unknown> = written.compile();
      if (this.options.alsoWrite) {
        // The organization is the statement's last parameter (run() appends its value): one
        // placeholder after the insert's own, named as often as the other writes need it.
        const organization = `$${statement.parameters.length + 1}::uuid`;
        const bodies = this.options.alsoWrite('inserted', organization);
        const also = bodies.map((body, i) => `also_written_${i} as (${body})`);
        // Without `returning`, nothing comes back (the CTEs run all the same).
        const withAlso =
          sql`with inserted as (${written}), ${sql.raw(also.join(', '))} select * from inserted${sql.raw(returning ? '' : ' where false')}`.compile(
            db,
          );
        // A parameter PostgreSQL sees nowhere in the text has no type it can infer: only a
        // statement that names the organization takes it.
        const namesOrganization = bodies.some((body) => body.includes(organization));
        statement = namesOrganization ? { ...withAlso, parameters: [...withAlso.parameters, null] } : withAlso;
      }
      entry = { columns, statement };
      this.statements.set(key, entry);
    }
    return entry;
  }
}
