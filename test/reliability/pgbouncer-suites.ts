/**
 * The database-facing suites (API, ledger, webhooks, attribution) run again, every statement
 * through Debian's PgBouncer in transaction mode with PgBouncer's defaults otherwise and fewer
 * server connections than the suites' pools: each transaction may land on any server connection,
 * and server connections idle for 2 s are closed and opened anew. Both ask for a password, as an
 * operator's do: the suites run on a PostgreSQL cluster of their own (test/reliability/support/
 * own-cluster.ts: scram-sha-256, a password of URL-special and non-ASCII characters), behind a
 * PgBouncer with `auth_type = scram-sha-256`. Run by .ci/run after `npm test`:
 *
 *   npx tsx test/reliability/pgbouncer-suites.ts [vitest args]
 *
 * Without root or the server binaries (a laptop, not CI) it pools DATABASE_URL instead, as given.
 * Exits with vitest's exit code.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ownClusterUnavailable, startOwnCluster, type OwnCluster } from './support/own-cluster.js';
import { startPgBouncer } from './support/pgbouncer.js';

const SUITES = ['test/api', 'test/ledger', 'test/webhooks', 'test/attribution'];

const unavailable = ownClusterUnavailable();
if (unavailable && process.env.CI) {
  console.error(`pgbouncer-suites: cannot build the password-protected PostgreSQL under CI: ${unavailable}`);
  process.exit(2);
}
let cluster: OwnCluster | undefined;
if (unavailable)
  console.warn(`pgbouncer-suites: no cluster of its own (${unavailable}); pooling DATABASE_URL as given`);
else cluster = await startOwnCluster();
const serverUrl = cluster?.url ?? process.env.DATABASE_URL;
if (!serverUrl) {
  console.error('pgbouncer-suites: set DATABASE_URL to the PostgreSQL server to pool');
  process.exit(2);
}
/** Pools serverUrl through a PgBouncer of its own and runs the suites through it: vitest's exit code. */
async function runSuites(serverUrl: string): Promise<number | null> {
  const bouncer = await startPgBouncer({
    target: new URL(serverUrl),
    poolMode: 'transaction',
    poolSize: 4,
    settings: { server_idle_timeout: 2 },
  });
  const pooledUrl = bouncer.urlFor(serverUrl);
  if (new URL(serverUrl).password) {
    // Both really ask: a wrong password is refused by PostgreSQL and by PgBouncer.
    for (const url of [serverUrl, pooledUrl]) {
      const wrong = new URL(url);
      wrong.password = 'wrong';
      const client = new pg.Client({ connectionString: wrong.toString() });
      client.on('error', () => undefined);
      const refused = await client.connect().then(
        () => false,
        () => true,
      );
      await client.end().catch(() => undefined);
      if (!refused) throw new Error(`pgbouncer-suites: 127.0.0.1:${wrong.port} accepted a wrong password`);
    }
  }
  const auth = new URL(serverUrl).password
    ? 'a password asked for by PgBouncer (scram-sha-256) and by PostgreSQL (scram-sha-256)'
    : 'no password (trust)';
  console.info(
    `pgbouncer-suites: ${SUITES.join(' ')} through PgBouncer (transaction mode, 4 server connections) at 127.0.0.1:${bouncer.port}, with ${auth}`,
  );
  const args = process.argv.slice(2);
  const vitest = spawn(
    process.execPath,
    [
      fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url)),
      'run',
      ...(args.length ? args : SUITES),
    ],
    {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      env: { ...process.env, DATABASE_URL: pooledUrl },
      stdio: 'inherit',
    },
  );
  const [code] = (await once(vitest, 'exit')) as [number | null];
  await bouncer.stop();
  return code;
}

let code: number | null;
try {
  code = await runSuites(serverUrl);
} finally {
  cluster?.stop();
}
process.exit(code ?? 1);
