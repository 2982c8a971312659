import { describe, expect, it } from 'vitest';
import { DELETION_RECEIPTS, ORGANIZATION_TABLES } from '../../server/src/modules/organizations/organization-data.js';
import { testServer } from '../support/server.js';

/**
 * Deleting an organization (modules/organizations/organization-data.ts) is one ordered list of
 * tables, read here against PostgreSQL's catalog: every table holding an organization's rows is in
 * it, and every table comes before each table it refers to, so that no DELETE is refused by a key.
 */
describe('the tables an organization owns, in the order they are deleted', () => {
  it('name every table with an organization_id (and the users’ sessions and accounts)', async () => {
    const { db } = await testServer();
    const tables = await db.orm.em.getConnection().execute<{ table: string }[]>(
      `select c.relname as "table" from pg_class c join pg_attribute a on a.attrelid = c.oid
       where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' and a.attname = 'organization_id' and not a.attisdropped order by 1`,
    );
    const listed = new Set<string>(ORGANIZATION_TABLES);
    // The deletions' receipts outlive the organization they record: the one table left out.
    expect(tables.map((t) => t.table)).toContain(DELETION_RECEIPTS);
    for (const { table } of tables) if (table !== DELETION_RECEIPTS) expect(listed, table).toContain(table);
    expect(listed.size).toBe(ORGANIZATION_TABLES.length);
  });

  it('list each table before every table it refers to', async () => {
    const { db } = await testServer();
    const references = await db.orm.em.getConnection().execute<{ child: string; parent: string; on_delete: string }[]>(
      `select conrelid::regclass::text as child, confrelid::regclass::text as parent, confdeltype as on_delete from pg_constraint
       where contype = 'f' and connamespace = current_schema()::regnamespace and conrelid <> confrelid`,
    );
    const position = new Map<string, number>(ORGANIZATION_TABLES.map((t, i) => [t, i]));
    for (const { child, parent } of references) {
      if (!position.has(child) || !position.has(parent)) continue;
      expect(position.get(child)!, `${child} before ${parent}`).toBeLessThan(position.get(parent)!);
    }
  });
});
