import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { initOrm } from '../../server/src/db/orm.js';
import { OLD_CHAIN_MIGRATIONS } from '../../server/src/db/migrations/baseline/old-chain.js';
import {
  call,
  createMerchantOn,
  describeWithPostgres,
  startService,
  stopService,
  type ServiceProcess,
} from './support/service.js';

/**
 * The service as `npm start` runs it (server/src/main.ts, a child process) creates nothing in the
 * database at run time: the functions of the application's schema are the migrations', the same
 * before and after traffic, and the service serves with a role that has no CREATE privilege on
 * the database or its schema (the migrations are applied by the owner, at deploy time). A database
 * made by the development migrations before the baseline is refused with instructions.
 */
const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const suffix = randomBytes(3).toString('hex');
const dbName = `aa_role_${process.pid}_${suffix}`;
const roleName = `aa_service_${suffix}`;
const urlOf = (database: string, user?: string) => {
  const url = new URL(SERVER_URL);
  url.pathname = `/${database}`;
  if (user) url.username = user;
  return url.toString();
};

async function admin<T>(database: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlOf(database) });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** What the application's schema holds that code could create: functions (with their bodies) and relations. */
async function catalog(): Promise<{ functions: string[]; relations: string[] }> {
  return admin(dbName, async (client) => ({
    functions: (
      await client.query(
        `select p.oid::regprocedure::text || ' ' || md5(p.prosrc) as f from pg_proc p where p.pronamespace = 'public'::regnamespace order by 1`,
      )
    ).rows.map((r) => r.f),
    relations: (
      await client.query(`select relname from pg_class where relnamespace = 'public'::regnamespace order by 1`)
    ).rows.map((r) => r.relname),
  }));
}

let service: ServiceProcess | undefined;
const oldChainDb = `${dbName}_old`;

afterAll(async () => {
  await stopService(service);
  await admin('postgres', async (client) => {
    await client.query(`drop database if exists "${dbName}" with (force)`);
    await client.query(`drop database if exists "${oldChainDb}" with (force)`);
    await client.query(`drop role if exists "${roleName}"`);
  });
});

describeWithPostgres('the service creates nothing at run time', () => {
  it(
    'serves clicks, conversions and reports with a role without CREATE; the schema’s functions are the same before and after',
    { timeout: 180_000 },
    async () => {
      await admin('postgres', (client) => client.query(`create database "${dbName}"`));
      // Deploy: the owner applies the migrations (and pg-boss installs its own schema), once.
      service = await startService(urlOf(dbName));
      await stopService(service);
      const before = await catalog();
      expect(before.functions.map((f) => f.split('(')[0])).toEqual(['commission_due', 'commission_status_at']);

      // Serve: a role that may read and write rows, and nothing more.
      await admin(dbName, async (client) => {
        await client.query(`create role "${roleName}" login`);
        for (const schema of ['public', 'pgboss']) {
          await client.query(`grant usage on schema ${schema} to "${roleName}"`);
          await client.query(
            `grant select, insert, update, delete, truncate on all tables in schema ${schema} to "${roleName}"`,
          );
          await client.query(`grant usage, select on all sequences in schema ${schema} to "${roleName}"`);
          await client.query(`grant execute on all functions in schema ${schema} to "${roleName}"`);
        }
        const privileges = (
          await client.query(
            `select has_database_privilege($1, current_database(), 'CREATE') as db, has_schema_privilege($1, 'public', 'CREATE') as schema`,
            [roleName],
          )
        ).rows[0];
        expect(privileges).toEqual({ db: false, schema: false });
      });
      service = await startService(urlOf(dbName, roleName));
      const m = await createMerchantOn(service.url);
      const click = await call(service.url, 'POST', '/api/clicks', {
        key: m.key,
        body: { ref: m.slug, ip: '203.0.113.9', user_agent: 'test' },
      });
      expect(click.status).toBe(201);
      for (let i = 0; i < 5; i++) {
        const byCookie = await call(service.url, 'POST', '/api/conversions', {
          key: m.key,
          body: { external_id: `c-${i}`, amount: 20, cookie_id: click.body.data.click.cookie_id },
        });
        expect(byCookie.status).toBe(201);
      }
      const customer = await call(service.url, 'POST', '/api/customers', {
        key: m.key,
        body: { customer_id: 'cus_1', ref: m.slug },
      });
      expect(customer.status).toBe(201);
      for (let i = 0; i < 3; i++) {
        const renewal = await call(service.url, 'POST', '/api/conversions', {
          key: m.key,
          body: { external_id: `r-${i}`, amount: 10, customer_id: 'cus_1' },
        });
        expect(renewal.status).toBe(201);
      }
      const from = new Date(Date.now() - 86_400_000).toISOString();
      const to = new Date(Date.now() + 86_400_000).toISOString();
      expect(
        (await call(service.url, 'GET', `/api/reports/affiliates?from=${from}&to=${to}`, { key: m.key })).status,
      ).toBe(200);
      expect(
        (await call(service.url, 'GET', `/api/reports/timeseries?from=${from}&to=${to}&interval=day`, { key: m.key }))
          .status,
      ).toBe(200);
      expect((await call(service.url, 'GET', '/api/commissions?status=pending', { key: m.key })).status).toBe(200);
      await stopService(service);
      expect(await catalog()).toEqual(before);
    },
  );

  it(
    'refuses a database made by the migrations before the baseline, says what to do, and changes nothing',
    { timeout: 60_000 },
    async () => {
      await admin('postgres', (client) => client.query(`create database "${oldChainDb}"`));
      await admin(oldChainDb, async (client) => {
        await client.query(
          `create table mikro_orm_migrations (id serial primary key, name varchar(255) not null, executed_at timestamptz not null default now())`,
        );
        await client.query(`insert into mikro_orm_migrations (name) select unnest($1::text[])`, [OLD_CHAIN_MIGRATIONS]);
      });
      await expect(initOrm(urlOf(oldChainDb), 1)).rejects.toThrow(
        /made by the development migrations that preceded the baseline.*pg_dump --data-only/s,
      );
      const tables = await admin(oldChainDb, async (client) =>
        (await client.query(`select tablename from pg_tables where schemaname = 'public' order by 1`)).rows.map(
          (r) => r.tablename,
        ),
      );
      expect(tables).toEqual(['mikro_orm_migrations']);
    },
  );
});
