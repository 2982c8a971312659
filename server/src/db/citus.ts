import {
  COLOCATION_ANCHOR,
  DISTRIBUTED_TABLES,
  KEYED_TABLES,
  REFERENCE_TABLES,
  citusDistributionSql,
  distributeTableSql,
} from './distribution.js';

/**
 * Distributing the schema over Citus from the service's own migrations: they call these on every
 * database, and these do nothing where the citus extension is not installed (plain PostgreSQL,
 * the embedded one). `execute` is the migration's own (`this.execute`, in its transaction).
 */
export type Execute = (sql: string) => Promise<Record<string, unknown>[]>;

/** True when this database has the citus extension (a Citus coordinator). */
export async function citusInstalled(execute: Execute): Promise<boolean> {
  const rows = await execute(`select 1 from pg_extension where extname = 'citus'`);
  return rows.length > 0;
}

interface ForeignKey {
  table: string;
  name: string;
  definition: string;
}

/**
 * The foreign keys that touch any of `tables`, either side, as PostgreSQL states them
 * (pg_get_constraintdef: columns, referenced columns, actions, deferrability, NOT VALID).
 */
async function foreignKeysTouching(execute: Execute, tables: readonly string[]): Promise<ForeignKey[]> {
  const list = tables.map((t) => `'${t}'`).join(', ');
  return (await execute(`
    select c.conrelid::regclass::text as "table", c.conname as "name", pg_get_constraintdef(c.oid) as "definition"
    from pg_constraint c
    where c.contype = 'f' and c.connamespace = current_schema()::regnamespace
      and (c.conrelid::regclass::text in (${list}) or c.confrelid::regclass::text in (${list}))
    order by 1, 2`)) as unknown as ForeignKey[];
}

/**
 * Distributes the whole schema (db/distribution.ts's lists) on a Citus coordinator; nothing on
 * plain PostgreSQL. Citus distributes one table at a time and refuses a foreign key between a
 * distributed table and a plain one, either way: whatever the order, some table would reference
 * one not yet distributed. So every foreign key among these tables is dropped, the tables are
 * distributed, and each key is re-created with its own name and PostgreSQL's own definition of it,
 * in the same transaction (test/reliability/citus-cluster.test.ts compares pg_constraint before
 * and after). Sequential mode: Citus refuses parallel shard commands after a reference table was
 * written in the same transaction.
 */
export async function distributeSchema(execute: Execute): Promise<void> {
  if (!(await citusInstalled(execute))) return;
  await execute(`set local citus.multi_shard_modify_mode to 'sequential'`);
  const tables = [...REFERENCE_TABLES, ...DISTRIBUTED_TABLES, ...KEYED_TABLES.map((k) => k.table)];
  const keys = await foreignKeysTouching(execute, tables);
  for (const key of keys) await execute(`alter table "${key.table}" drop constraint "${key.name}"`);
  for (const call of citusDistributionSql()) await execute(call);
  for (const key of keys) await execute(`alter table "${key.table}" add constraint "${key.name}" ${key.definition}`);
}

/**
 * For a later migration that creates a table: makes it a tenant table (hash-distributed by
 * organization_id, co-located with every other) or a reference table on a Citus coordinator;
 * nothing on plain PostgreSQL. Call it after creating the table and before adding foreign keys
 * that point at it from other tables, and name the table in db/distribution.ts's lists (the
 * catalog test fails otherwise).
 */
export async function distributeNewTable(
  execute: Execute,
  table: string,
  kind: 'distributed' | 'reference',
): Promise<void> {
  if (!(await citusInstalled(execute))) return;
  if (kind === 'distributed' && table === COLOCATION_ANCHOR)
    throw new Error(`${table} is the co-location anchor, distributed by the schema's migration`);
  await execute(`set local citus.multi_shard_modify_mode to 'sequential'`);
  await execute(kind === 'reference' ? `select create_reference_table('${table}')` : distributeTableSql(table));
}
