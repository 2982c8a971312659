import { describe, expect, it } from 'vitest';
import { testServer } from '../support/server.js';

/**
 * Every foreign key has an index on its referencing side: deleting or re-keying a referenced row
 * (an affiliate, a payout, a conversion) makes PostgreSQL look for the rows that point at it, and
 * without such an index that check reads the whole referencing table's organization (every click
 * of the organization to delete one affiliate). An index covers a foreign key when its leading
 * columns are the key's columns, in any order (PostgreSQL matches each equality to an index column
 * by itself), and it is valid and either whole or partial only by `<one of its columns> IS NOT NULL`
 * (the check's equality implies it, so the planner uses it). Read from the migrated database's
 * catalog, so it holds for every table added later.
 */
describe('foreign keys', () => {
  it('each has an index whose leading columns are its columns', { timeout: 120_000 }, async () => {
    const { db } = await testServer();
    const uncovered = await db.orm.em.getConnection().execute<{ constraint: string; columns: string }[]>(
      `select c.conrelid::regclass::text || ' ' || c.conname as constraint,
              (select string_agg(a.attname, ', ' order by k.ord)
                 from unnest(c.conkey) with ordinality k(attnum, ord)
                 join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum) as columns
         from pg_constraint c
         join pg_namespace n on n.oid = c.connamespace
        where c.contype = 'f' and n.nspname = current_schema()
          and not exists (
            select 1 from pg_index i
             where i.indrelid = c.conrelid and i.indisvalid
               and (i.indpred is null or pg_get_expr(i.indpred, i.indrelid) in (
                 select '(' || quote_ident(a.attname) || ' IS NOT NULL)' from pg_attribute a
                  where a.attrelid = c.conrelid and a.attnum = any (c.conkey)))
               and i.indnkeyatts >= cardinality(c.conkey)
               -- the index's first cardinality(conkey) key columns, as a set, are the key's columns
               and (select array_agg(x order by x) from unnest((i.indkey::int2[])[0:cardinality(c.conkey) - 1]) x)
                 = (select array_agg(x order by x) from unnest(c.conkey) x))
        order by 1`,
    );
    expect(uncovered, 'foreign keys with no index on their columns').toEqual([]);
  });
});
