import { randomBytes } from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { closeOrm, initOrm } from '../../server/src/db/orm.js';
import { citusNodesOf, createCitusDatabase, dropCitusDatabase } from './citus.js';

export interface TestDatabase {
  url: string;
  orm: MikroORM;
  /** True on the embedded PGlite (a single connection), false on a real PostgreSQL. */
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * A fresh database with every migration applied: a new database on the PostgreSQL at
 * DATABASE_URL (CI), on every node when that is a Citus coordinator (the migrations then
 * distribute the schema), or an in-memory embedded PostgreSQL where none is set (a laptop).
 * CI must test the real thing, so there a missing DATABASE_URL fails the run.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    if (process.env.CI) throw new Error('CI must run the suite against PostgreSQL: set DATABASE_URL');
    const embedded = await startEmbeddedPostgres();
    const orm = await initOrm(embedded.url, 1);
    return {
      url: embedded.url,
      orm,
      embedded: true,
      async stop() {
        await closeOrm(orm, true);
        await embedded.stop();
      },
    };
  }
  const name = `aa_test_${process.env.AA_TEST_RUN ?? 'adhoc'}_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = await MikroORM.init({
    clientUrl: serverUrl,
    entities: [],
    discovery: { warnWhenNoEntities: false },
    allowGlobalContext: true,
  });
  // On a Citus coordinator the database is made on every node (support/citus.ts).
  const citus = await citusNodesOf(serverUrl);
  if (citus) await createCitusDatabase(serverUrl, citus, name);
  else await admin.em.getConnection().execute(`create database "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const orm = await initOrm(url.toString(), 10);
  return {
    url: url.toString(),
    orm,
    embedded: false,
    async stop() {
      await orm.close(true);
      if (citus) await dropCitusDatabase(serverUrl, citus, name);
      else await admin.em.getConnection().execute(`drop database if exists "${name}" with (force)`);
      await admin.close(true);
    },
  };
}
