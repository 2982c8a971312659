import { describe, expect, it } from 'vitest';
import pg from 'pg';
import {
  DISTRIBUTED_TABLES,
  DISTRIBUTION_COLUMN,
  KEYED_TABLES,
  LOCAL_TABLES,
  REFERENCE_TABLES,
  citusDistributionSql,
} from '../../server/src/db/distribution.js';
import { citusNodesOf } from '../support/citus.js';
import { testServer } from '../support/server.js';
import { realDistributionProblems } from './support/citus-distribution.js';

/**
 * The schema keeps the shape Citus shards on, by organization (server/src/db/distribution.ts): read
 * from PostgreSQL's catalog after every migration, so a table or key added later that breaks
 * Citus's rules fails here, with its name, on plain PostgreSQL already. On a Citus coordinator
 * (test/reliability/citus-suites.ts runs this file there) it also reads Citus's own metadata: the
 * migrations really distributed every table as the lists say (citus-cluster.test.ts tests the rest).
 */
const onCitus = process.env.DATABASE_URL
  ? (await citusNodesOf(process.env.DATABASE_URL).catch(() => undefined)) !== undefined
  : false;

interface KeyRow {
  table: string;
  name: string;
  kind: 'primary key' | 'unique' | 'foreign key';
  columns: string[];
  referenced_table: string | null;
  referenced_columns: string[] | null;
}

async function keysOf(): Promise<{ tables: string[]; keys: KeyRow[] }> {
  const { db } = await testServer();
  const connection = db.orm.em.getConnection();
  const tables = (
    await connection.execute<{ table: string }[]>(
      `select tablename as "table" from pg_tables where schemaname = current_schema() order by 1`,
    )
  ).map((r) => r.table);
  // Constraints (primary, unique, foreign keys) and unique indexes that back no constraint.
  const keys = await connection.execute<KeyRow[]>(`
    select c.conrelid::regclass::text as "table", c.conname as name,
      case c.contype when 'p' then 'primary key' when 'u' then 'unique' else 'foreign key' end as kind,
      array(select a.attname::text from unnest(c.conkey) with ordinality k(num, ord) join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.num order by k.ord) as columns,
      case when c.contype = 'f' then c.confrelid::regclass::text end as referenced_table,
      case when c.contype = 'f' then array(select a.attname::text from unnest(c.confkey) with ordinality k(num, ord) join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.num order by k.ord) end as referenced_columns
    from pg_constraint c join pg_class t on t.oid = c.conrelid join pg_namespace n on n.oid = t.relnamespace
    where n.nspname = current_schema() and c.contype in ('p', 'u', 'f')
    union all
    select i.indrelid::regclass::text, i.indexrelid::regclass::text, 'unique',
      array(select a.attname::text from unnest(i.indkey::int2[]) with ordinality k(num, ord) join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.num order by k.ord), null, null
    from pg_index i join pg_class t on t.oid = i.indrelid join pg_namespace n on n.oid = t.relnamespace
    where n.nspname = current_schema() and i.indisunique and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)
    order by 1, 2`);
  return { tables, keys };
}

describe('a schema Citus can shard by organization_id', () => {
  it('every table is named in db/distribution.ts, once', async () => {
    const { tables } = await keysOf();
    const named = [
      ...DISTRIBUTED_TABLES,
      ...REFERENCE_TABLES,
      ...LOCAL_TABLES,
      ...KEYED_TABLES.map((k) => k.table),
    ] as string[];
    expect(new Set(named).size).toBe(named.length);
    expect([...tables].sort()).toEqual([...named].sort());
  });

  it('every primary, unique and foreign key of a distributed table includes organization_id (a foreign key on both sides, unless it references a reference table)', async () => {
    const { keys } = await keysOf();
    const distributed = new Set<string>(DISTRIBUTED_TABLES);
    const reference = new Set<string>(REFERENCE_TABLES);
    const broken = keys
      .filter((k) => distributed.has(k.table))
      .filter((k) => {
        if (k.kind !== 'foreign key') return !k.columns.includes(DISTRIBUTION_COLUMN);
        if (reference.has(k.referenced_table!)) return false;
        if (!distributed.has(k.referenced_table!)) return true; // a distributed table may reference only distributed or reference tables
        // Both sides name the organization, at the same position, so that the reference stays within one organization.
        const at = k.columns.indexOf(DISTRIBUTION_COLUMN);
        return at < 0 || k.referenced_columns![at] !== DISTRIBUTION_COLUMN;
      })
      .map(
        (k) =>
          `${k.table}.${k.name} (${k.kind} on ${k.columns.join(', ')}${k.referenced_table ? ` -> ${k.referenced_table}` : ''})`,
      );
    expect(broken).toEqual([]);
    // Every distributed table has the column, and a primary key.
    for (const table of DISTRIBUTED_TABLES)
      expect(
        keys.some((k) => k.table === table && k.kind === 'primary key'),
        `${table} has a primary key`,
      ).toBe(true);
  });

  it('a reference table references only reference tables; the Citus calls name every table in order', async () => {
    const { keys } = await keysOf();
    const reference = new Set<string>(REFERENCE_TABLES);
    const outward = keys.filter(
      (k) => reference.has(k.table) && k.kind === 'foreign key' && !reference.has(k.referenced_table!),
    );
    expect(outward).toEqual([]);
    const calls = citusDistributionSql();
    expect(calls).toHaveLength(REFERENCE_TABLES.length + DISTRIBUTED_TABLES.length + KEYED_TABLES.length);
    // A distributed table comes after every distributed table it references.
    const order = DISTRIBUTED_TABLES as readonly string[];
    for (const k of keys.filter(
      (k) =>
        k.kind === 'foreign key' &&
        order.includes(k.table) &&
        order.includes(k.referenced_table!) &&
        k.table !== k.referenced_table,
    )) {
      expect(order.indexOf(k.referenced_table!), `${k.table} after ${k.referenced_table}`).toBeLessThan(
        order.indexOf(k.table),
      );
    }
  });
});

describe.runIf(onCitus)('on a Citus coordinator: the schema as really distributed', () => {
  it('every table is distributed, replicated or left local as db/distribution.ts says', async () => {
    const client = new pg.Client({ connectionString: (await testServer()).db.url });
    await client.connect();
    try {
      expect(await realDistributionProblems(client)).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
