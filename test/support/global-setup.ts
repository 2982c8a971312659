import { randomBytes } from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';
import { writeSnippet } from '../../server/src/snippet/build.js';
import { citusNodesOf, dropCitusDatabase } from './citus.js';

/** Each run names its databases aa_test_<run>_…, so concurrent runs never drop each other's. */
const run = randomBytes(4).toString('hex');

/** Drops the per-worker test databases this run left on the real PostgreSQL. */
async function dropTestDatabases(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) return;
  const admin = await MikroORM.init({
    clientUrl: url,
    entities: [],
    discovery: { warnWhenNoEntities: false },
    allowGlobalContext: true,
  });
  try {
    const rows = await admin.em
      .getConnection()
      .execute<{ datname: string }[]>(`select datname from pg_database where datname like 'aa\\_test\\_${run}\\_%'`);
    // On a Citus coordinator, each test database is on every node too.
    const citus = await citusNodesOf(url);
    for (const { datname } of rows) {
      if (citus) await dropCitusDatabase(url, citus, datname);
      else await admin.em.getConnection().execute(`drop database if exists "${datname}" with (force)`);
    }
  } finally {
    await admin.close(true);
  }
}

export async function setup(): Promise<void> {
  process.env.AA_TEST_RUN = run;
  // What `npm run build` does for the snippet: the service serves the compiled file, never compiles it.
  await writeSnippet();
}

export async function teardown(): Promise<void> {
  await dropTestDatabases();
}
