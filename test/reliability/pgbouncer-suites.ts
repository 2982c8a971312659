/**
 * The database-facing suites (API, ledger, webhooks, attribution) run again, every statement
 * through Debian's PgBouncer in transaction mode with PgBouncer's defaults otherwise and fewer
 * server connections than the suites' pools: each transaction may land on any server connection,
 * and server connections idle for 2 s are closed and opened anew. Run by .ci/run after `npm test`:
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx test/reliability/pgbouncer-suites.ts [vitest args]
 *
 * Exits with vitest's exit code.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startPgBouncer } from './support/pgbouncer.js';

const SUITES = ['test/api', 'test/ledger', 'test/webhooks', 'test/attribution'];

const serverUrl = process.env.DATABASE_URL;
if (!serverUrl) {
  console.error('pgbouncer-suites: set DATABASE_URL to the PostgreSQL server to pool');
  process.exit(2);
}
const bouncer = await startPgBouncer({ target: new URL(serverUrl), poolMode: 'transaction', poolSize: 4, settings: { server_idle_timeout: 2 } });
const pooledUrl = bouncer.urlFor(serverUrl);
console.info(`pgbouncer-suites: ${SUITES.join(' ')} through PgBouncer (transaction mode, 4 server connections) at ${pooledUrl}`);
const args = process.argv.slice(2);
const vitest = spawn(process.execPath, [fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url)), 'run', ...(args.length ? args : SUITES)], {
  cwd: fileURLToPath(new URL('../../', import.meta.url)),
  env: { ...process.env, DATABASE_URL: pooledUrl },
  stdio: 'inherit',
});
const [code] = (await once(vitest, 'exit')) as [number | null];
await bouncer.stop();
process.exit(code ?? 1);
