import type pg from 'pg';
import {
  COLOCATION_ANCHOR,
  DISTRIBUTED_TABLES,
  DISTRIBUTION_COLUMN,
  KEYED_TABLES,
  LOCAL_TABLES,
  REFERENCE_TABLES,
} from '../../../server/src/db/distribution.js';

/**
 * How a database on a Citus coordinator is really distributed, read from Citus's own metadata
 * (pg_dist_partition), against db/distribution.ts: every tenant table hash-distributed by
 * organization_id in the anchor's co-location group, every reference table replicated, each keyed
 * table by its own key in a group of its own, and nothing else in Citus's metadata (the local
 * tables, and pg-boss's schema). Answers what differs, empty when nothing does.
 */
export async function realDistributionProblems(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ table: string; method: string; column: string | null; colocation: number }>(
    `select p.logicalrelid::regclass::text as "table", p.partmethod as method,
       column_to_column_name(p.logicalrelid, p.partkey) as "column", p.colocationid as colocation
     from pg_dist_partition p`,
  );
  const found = new Map(rows.map((r) => [r.table, r]));
  const problems: string[] = [];
  const anchor = found.get(COLOCATION_ANCHOR)?.colocation;
  for (const table of DISTRIBUTED_TABLES) {
    const row = found.get(table);
    if (!row || row.method !== 'h' || row.column !== DISTRIBUTION_COLUMN || row.colocation !== anchor)
      problems.push(
        `${table}: ${row ? JSON.stringify(row) : 'not distributed'}, not hash by ${DISTRIBUTION_COLUMN} co-located with ${COLOCATION_ANCHOR}`,
      );
  }
  for (const table of REFERENCE_TABLES) {
    const row = found.get(table);
    if (!row || row.method !== 'n')
      problems.push(`${table}: ${row ? JSON.stringify(row) : 'not in Citus'}, not a reference table`);
  }
  for (const { table, column } of KEYED_TABLES) {
    const row = found.get(table);
    if (!row || row.method !== 'h' || row.column !== column || row.colocation === anchor)
      problems.push(`${table}: ${row ? JSON.stringify(row) : 'not distributed'}, not hash by ${column} on its own`);
  }
  for (const table of LOCAL_TABLES) if (found.has(table)) problems.push(`${table}: in Citus, should stay local`);
  const named = new Set<string>([...DISTRIBUTED_TABLES, ...REFERENCE_TABLES, ...KEYED_TABLES.map((k) => k.table)]);
  for (const table of found.keys())
    if (!named.has(table)) problems.push(`${table}: in Citus, not named in db/distribution.ts`);
  return problems;
}

/** The foreign keys of the schema's tables as PostgreSQL states them (shards' own copies left out). */
export async function foreignKeysOf(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ key: string }>(
    `select c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid) as key
     from pg_constraint c join pg_tables t on t.schemaname = current_schema() and t.tablename = c.conrelid::regclass::text
     where c.contype = 'f' and c.connamespace = current_schema()::regnamespace order by 1`,
  );
  return rows.map((r) => r.key);
}
