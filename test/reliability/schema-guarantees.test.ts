import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { kyselyOf } from '../../server/src/db/database.js';
import { twoMerchantsAndASecondProgram } from '../support/memberships.js';

/**
 * What the schema promises, read from PostgreSQL's catalog and probed on PostgreSQL itself
 * (docs/architecture.md, "Guarantees are stated in PostgreSQL's own terms"): references are foreign
 * keys, enforced on INSERT and UPDATE even with user triggers disabled; no trigger stands in for a
 * key or refuses a delete; an ordinary migration on the busy tables is accepted. Each probe that
 * changes the schema runs in a transaction rolled back.
 */

/** The references the ledger rests on, as (table, constraint, columns -> referenced table and columns). */
const LEDGER_KEYS = [
  ['conversions', 'conversions_click_fkey', 'click_id,organization_id', 'clicks', 'id,organization_id'],
  [
    'conversions',
    'conversions_membership_fkey',
    'affiliate_id,program_id,organization_id',
    'affiliates',
    'id,program_id,organization_id',
  ],
  ['commissions', 'commissions_conversion_fkey', 'conversion_id,organization_id', 'conversions', 'id,organization_id'],
  [
    'commissions',
    'commissions_membership_fkey',
    'affiliate_id,program_id,organization_id',
    'affiliates',
    'id,program_id,organization_id',
  ],
  [
    'payout_items',
    'payout_items_commission_fkey',
    'commission_id,organization_id',
    'commissions',
    'id,organization_id',
  ],
  ['payout_items', 'payout_items_payout_fkey', 'payout_id,organization_id', 'payouts', 'id,organization_id'],
  ['customers', 'customers_click_id_fkey', 'click_id,organization_id', 'clicks', 'id,organization_id'],
  [
    'clicks',
    'clicks_membership_fkey',
    'affiliate_id,program_id,organization_id',
    'affiliates',
    'id,program_id,organization_id',
  ],
] as const;

/** Runs `probe` in a transaction that is always rolled back: a schema change never outlives it. */
async function rolledBack(
  db: Awaited<ReturnType<typeof twoMerchantsAndASecondProgram>>['db'],
  probe: (trx: ReturnType<typeof kyselyOf>) => Promise<void>,
): Promise<void> {
  const rollback = new Error('rolled back');
  await expect(
    kyselyOf(db.orm)
      .transaction()
      .execute(async (trx) => {
        await probe(trx);
        throw rollback;
      }),
  ).rejects.toBe(rollback);
}

describe('the schema states its guarantees in PostgreSQL’s own terms', () => {
  it('every ledger reference is a composite foreign key with organization_id, in pg_constraint', async () => {
    const { connection } = await twoMerchantsAndASecondProgram();
    const keys = await connection.execute<
      { table: string; name: string; columns: string; referenced: string; referenced_columns: string }[]
    >(`
      select c.conrelid::regclass::text as "table", c.conname as name,
        array_to_string(array(select a.attname from unnest(c.conkey) with ordinality k(n, o) join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n order by k.o), ',') as columns,
        c.confrelid::regclass::text as referenced,
        array_to_string(array(select a.attname from unnest(c.confkey) with ordinality k(n, o) join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.n order by k.o), ',') as referenced_columns
      from pg_constraint c where c.contype = 'f' and c.connamespace = current_schema()::regnamespace and c.convalidated`);
    const found = new Set(keys.map((k) => [k.table, k.name, k.columns, k.referenced, k.referenced_columns].join(' ')));
    for (const key of LEDGER_KEYS) expect(found, key.join(' ')).toContain(key.join(' '));
  });

  it('no user trigger, no plpgsql, nothing that reads across sessions: what Citus can distribute', async () => {
    const { connection } = await twoMerchantsAndASecondProgram();
    // Citus refuses to distribute a table with a trigger; the reports' read model is written by the
    // application (modules/reports/report-contributions.ts), so no table has one.
    const triggers = await connection.execute<{ name: string }[]>(
      `select t.tgrelid::regclass::text || '.' || t.tgname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid
       where not t.tgisinternal and c.relnamespace = current_schema()::regnamespace order by 1`,
    );
    expect(triggers.map((t) => t.name)).toEqual([]);
    // The schema's functions are the ledger's rule in plain SQL (inlined into each statement), none
    // procedural, none reading the server's sessions (a watermark from pg_stat_activity has no
    // meaning across a cluster's nodes).
    const functions = await connection.execute<{ name: string; language: string }[]>(
      `select p.proname as name, l.lanname as language from pg_proc p join pg_language l on l.oid = p.prolang
       where p.pronamespace = current_schema()::regnamespace and (l.lanname <> 'sql' or p.prosrc ilike '%pg_stat_activity%') order by 1`,
    );
    expect(functions).toEqual([]);
    // No composite type of its own: a column typed with one blocks later migrations.
    const types = await connection.execute<{ name: string }[]>(
      `select t.typname as name from pg_type t where t.typnamespace = current_schema()::regnamespace and t.typtype = 'c'
       and not exists (select 1 from pg_class c where c.oid = t.typrelid and c.relkind <> 'c') order by 1`,
    );
    expect(types).toEqual([]);
    const hints = await connection.execute<{ name: string }[]>(
      `select proname as name from pg_proc where pronamespace = current_schema()::regnamespace and (proconfig is not null or prosrc ilike '%is not distinct from n.organization_id%')`,
    );
    expect(hints).toEqual([]);
  });

  it('keys hold on UPDATE: a conversion cannot be pointed at a click or a membership that does not exist', async () => {
    const { connection, a, insertClick } = await twoMerchantsAndASecondProgram();
    const clickId = await insertClick(a.id, a.affiliate.id, a.program.id);
    const id = randomUUID();
    await connection.execute(
      `insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, click_id, occurred_at)
       values (?, ?, ?, 10, 'USD', 'initial', 3, ?, ?, ?, now())`,
      [id, a.id, `o_${id}`, a.affiliate.id, a.program.id, clickId],
    );
    await expect(
      connection.execute(`update conversions set click_id = ? where id = ?`, [randomUUID(), id]),
    ).rejects.toMatchObject({
      code: '23503',
      constraint: 'conversions_click_fkey',
    });
    await expect(
      connection.execute(`update conversions set affiliate_id = ? where id = ?`, [randomUUID(), id]),
    ).rejects.toMatchObject({
      code: '23503',
      constraint: 'conversions_membership_fkey',
    });
  });

  it('keys hold with user triggers disabled (what restore and bulk-load tools do)', async () => {
    const { db, a } = await twoMerchantsAndASecondProgram();
    await rolledBack(db, async (trx) => {
      await sql
        .raw(`alter table conversions disable trigger user; alter table commissions disable trigger user`)
        .execute(trx);
      const id = randomUUID();
      const insert = sql`insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, click_id, occurred_at)
        values (${id}, ${a.id}, ${`o_${id}`}, 10, 'USD', 'initial', 3, ${a.affiliate.id}, ${a.program.id}, ${randomUUID()}, now())`;
      await expect(insert.execute(trx)).rejects.toMatchObject({ code: '23503', constraint: 'conversions_click_fkey' });
    });
    await rolledBack(db, async (trx) => {
      await sql.raw(`alter table conversions disable trigger user`).execute(trx);
      const id = randomUUID();
      const insert = sql`insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, occurred_at)
        values (${id}, ${a.id}, ${`o_${id}`}, 10, 'USD', 'initial', 3, ${randomUUID()}, ${a.program.id}, now())`;
      await expect(insert.execute(trx)).rejects.toMatchObject({
        code: '23503',
        constraint: 'conversions_membership_fkey',
      });
    });
  });

  it.each(['conversions', 'commissions', 'customers'])(
    'an ordinary migration on %s is accepted: ADD COLUMN x int DEFAULT 1, and a type change',
    async (table) => {
      const { db } = await twoMerchantsAndASecondProgram();
      await rolledBack(db, async (trx) => {
        await sql.raw(`alter table ${table} add column x int default 1`).execute(trx);
        await sql.raw(`alter table ${table} alter column x type bigint`).execute(trx);
      });
    },
  );

  it('an unreferenced click is deleted', async () => {
    const { connection, a, insertClick } = await twoMerchantsAndASecondProgram();
    const clickId = await insertClick(a.id, a.affiliate.id, a.program.id);
    expect(await connection.execute(`delete from clicks where id = ? returning id`, [clickId])).toEqual([
      { id: clickId },
    ]);
  });
});
