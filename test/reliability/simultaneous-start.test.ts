import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeOrm, ormOptions } from '../../server/src/db/orm.js';
import { migrationsList } from '../../server/src/db/migrations/index.js';
import { MikroORM } from '@mikro-orm/postgresql';
import { describeWithPgBouncer, startPgBouncer, type PgBouncer } from './support/pgbouncer.js';
import { call, startService, stopService, withDatabase, type ServiceProcess } from './support/service.js';

const ROUNDS = 10;
const INSTANCES = 3;

/**
 * Three service processes started at the same instant on one database, ten times over: an empty
 * database or one a migration behind, directly on PostgreSQL or through PgBouncer in transaction
 * mode (where a session lock would not hold) with fewer server connections than processes. Every
 * process starts and serves, and every migration is recorded once.
 */
describeWithPgBouncer('instances starting at the same instant', () => {
  const serverUrl = process.env.DATABASE_URL!;
  let bouncer: PgBouncer;
  const created: string[] = [];

  beforeAll(async () => {
    bouncer = await startPgBouncer({ target: new URL(serverUrl), poolMode: 'transaction', poolSize: 2 });
  });
  afterAll(async () => {
    await bouncer?.stop();
    await withDatabase(serverUrl, async (client) => {
      for (const name of created) await client.query(`drop database if exists "${name}" with (force)`);
    });
  });

  async function freshDatabase(round: number): Promise<string> {
    const name = `aa_test_${process.env.AA_TEST_RUN ?? 'adhoc'}_${process.pid}_start${round}_${randomBytes(2).toString('hex')}`;
    await withDatabase(serverUrl, (client) => client.query(`create database "${name}"`));
    created.push(name);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return url.toString();
  }

  /** The database as the previous release left it: every migration but the last applied. */
  async function migrateAllButLast(url: string): Promise<void> {
    const orm = await MikroORM.init(ormOptions(url, 1));
    try {
      await orm.migrator.up({ to: migrationsList[migrationsList.length - 2].name });
    } finally {
      await closeOrm(orm);
    }
  }

  it(
    `${INSTANCES} processes, ${ROUNDS} rounds: all start, each migration applied once`,
    { timeout: 300_000 },
    async () => {
      const outcomes: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const url = await freshDatabase(round);
        const outdated = round % 2 === 1;
        const viaPgBouncer = round % 4 >= 2;
        if (outdated) await migrateAllButLast(url);
        const serviceUrl = viaPgBouncer ? bouncer.urlFor(url) : url;
        const starts = await Promise.allSettled(
          Array.from({ length: INSTANCES }, () => startService(serviceUrl, { DATABASE_DIRECT_URL: url })),
        );
        const started = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
        try {
          const failures = starts.flatMap((s) => (s.status === 'rejected' ? [String(s.reason).slice(0, 600)] : []));
          expect(failures, `round ${round}`).toEqual([]);
          for (const instance of started) expect((await call(instance.url, 'GET', '/ready')).status).toBe(200);
          const recorded = await withDatabase(url, async (client) =>
            (await client.query<{ name: string }>('select name from mikro_orm_migrations order by id')).rows.map(
              (r) => r.name,
            ),
          );
          expect(recorded, `round ${round}`).toEqual(migrationsList.map((m) => m.name));
          const waited = started.filter((s: ServiceProcess) =>
            s.logs.some((l) => /applying migrations; waiting/.test(String(l.msg))),
          ).length;
          outcomes.push(`${outdated ? 'outdated' : 'empty'}${viaPgBouncer ? ' via PgBouncer' : ''}: ${waited} waited`);
        } finally {
          await Promise.all(started.map(stopService));
        }
      }
      console.info(
        `[simultaneous-start] ${ROUNDS} rounds of ${INSTANCES} processes, all started, each migration recorded once: ${outcomes.join('; ')}`,
      );
    },
  );
});
