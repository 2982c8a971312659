import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { describeWithPostgres } from './support/service.js';

/**
 * Migration 20261231700000_reference_lookups_by_id: the statement checks of new conversions and
 * commission entries probe the referenced rows by their primary keys even when their plan is made
 * while the tables hold a handful of rows, which is when PostgreSQL would otherwise cost an index
 * led by the organization (clicks_cookie_unique, affiliates_list_idx, conversions_list_idx) the
 * same as the key, and keep that plan for the connection's life. The plans are read with
 * auto_explain (nested statements, sent to this client), on a fresh database.
 */
describeWithPostgres('reference checks on small tables', () => {
  let db: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.stop();
  });

  /** The plans of the two statement checks for one conversion and its sale entry, on a connection of their own (nothing cached). */
  async function checkPlans(org: string, affiliate: string, program: string, click: string): Promise<string[]> {
    const connection = new pg.Client({ connectionString: db.url });
    await connection.connect();
    try {
      const plans: string[] = [];
      connection.on('notice', (notice) => plans.push(notice.message ?? ''));
      await connection.query(`load 'auto_explain'`);
      await connection.query(`set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on; set client_min_messages = log`);
      const conversion = randomUUID();
      await connection.query(
        `insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, click_id, occurred_at)
         values ($1, $2, $3, 10, 'USD', 'initial', 3, $4, $5, $6, now())`,
        [conversion, org, `o_${conversion}`, affiliate, program, click],
      );
      await connection.query(
        `insert into commissions (id, organization_id, type, status, amount, currency, affiliate_id, program_id, conversion_id) values ($1, $2, 'sale', 'pending', 3, 'USD', $3, $4, $5)`,
        [randomUUID(), org, affiliate, program, conversion],
      );
      return plans.filter((plan) => /refers to no/.test(plan));
    } finally {
      await connection.end();
    }
  }

  it('probe the primary keys, never an index led by the organization, whatever the tables hold when the plan is made', { timeout: 60_000 }, async () => {
    const [org, program, affiliate, click] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await client.query(`insert into organizations (id, name) values ($1, 'Plans')`, [org]);
    await client.query(
      `insert into programs (id, organization_id, name, commission_type, commission_value, click_window_days, currency) values ($1, $2, 'P', 'percent', 30, 30, 'USD')`,
      [program, org],
    );
    await client.query(`insert into affiliates (id, organization_id, program_id, email, slug) values ($1, $2, $3, 'plans@example.com', 'plans')`, [affiliate, org, program]);
    await client.query(`insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, occurred_at) values ($1, $2, $3, $4, 'ck_plans', now())`, [
      click,
      org,
      affiliate,
      program,
    ]);

    // Before the fix, PostgreSQL 15 took conversions_customer_idx at about 300 conversions (the
    // primary key's btree growing a level while the others had not), then every check scanned the
    // organization's conversions. Rows are added below the checks (replica role: no triggers).
    const used: Record<number, string[]> = {};
    let stored = 0;
    for (const size of [0, 100, 300, 1_000, 3_000]) {
      const more = size - stored;
      await client.query('begin');
      await client.query('set local session_replication_role = replica');
      await client.query(
        `insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, occurred_at)
         select gen_random_uuid(), $1, md5(random()::text), 10, 'USD', 'initial', 3, $2, $3, now() from generate_series(1, $4::int)`,
        [org, affiliate, program, more],
      );
      await client.query(
        `insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, occurred_at)
         select gen_random_uuid(), $1, $2, $3, md5(random()::text), now() from generate_series(1, $4::int)`,
        [org, affiliate, program, more],
      );
      await client.query(
        `insert into affiliates (id, organization_id, program_id, email, slug)
         select gen_random_uuid(), $1, $2, md5(random()::text), md5(random()::text) from generate_series(1, $3::int)`,
        [org, program, more],
      );
      await client.query('commit');
      stored = size;
      const checks = await checkPlans(org, affiliate, program, click);
      expect(checks).toHaveLength(2); // one plan per statement check
      used[size] = [...new Set(checks.flatMap((plan) => [...plan.matchAll(/(?:using|Index Scan on) (\w+)/g)].map((m) => m[1]!)))].sort();
    }
    console.info(`[reference-lookups] indexes the checks used, by rows stored: ${JSON.stringify(used)}`);
    for (const indexes of Object.values(used)) {
      // Only keys that start with id.
      expect(indexes.filter((index) => !['affiliates_pkey', 'affiliates_membership_key', 'clicks_pkey', 'conversions_pkey'].includes(index))).toEqual([]);
      expect(indexes).toEqual(expect.arrayContaining(['clicks_pkey', 'conversions_pkey']));
    }
  });
});
