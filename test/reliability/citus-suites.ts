/**
 * The database-facing suites run again on a real Citus cluster: a coordinator and two workers of
 * the run's own on free ports (support/citus-cluster.ts), DATABASE_URL at the coordinator. Each
 * suite's database is created on every node with the citus extension (test/support/citus.ts) and
 * the service's own migrations distribute the schema there (db/citus.ts), so every statement the
 * suites send runs against distributed and reference tables. The cluster's own tests
 * (citus-cluster.test.ts: one worker per tenant, router plans, a shard moved under load) and the
 * distribution catalog test run with them. Run by .ci/run after the PgBouncer suites:
 *
 *   npx tsx test/reliability/citus-suites.ts [vitest args]
 *
 * Without Citus installed (../shared/vendor/citus/build.sh), root or the server binaries it says
 * why and exits 0, except under CI=true, where it fails. Exits with vitest's exit code.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { citusUnavailable, startCitusCluster } from './support/citus-cluster.js';

const CITUS_SUITES = [
  'test/api',
  'test/ledger',
  'test/webhooks',
  'test/events',
  'test/imports',
  'test/attribution',
  // The payouts' suites beyond test/api's payout rails: the run that dies mid-send.
  'test/reliability/payout-send-kill.test.ts',
  'test/reliability/citus-cluster.test.ts',
  'test/reliability/distribution-keys.test.ts',
];

const unavailable = citusUnavailable();
if (unavailable) {
  console.error(`citus-suites: no Citus cluster can be built here: ${unavailable}`);
  process.exit(process.env.CI ? 2 : 0);
}
const cluster = await startCitusCluster();
let code: number | null;
try {
  console.info(
    `citus-suites: coordinator 127.0.0.1:${cluster.coordinatorPort}, workers ${cluster.workerPorts.map((p) => `127.0.0.1:${p}`).join(', ')} (Citus, ${cluster.root})`,
  );
  const args = process.argv.slice(2);
  const vitest = spawn(
    process.execPath,
    [
      fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url)),
      'run',
      // A statement through the coordinator is a hop more, and the three nodes share the machine.
      '--testTimeout=90000',
      ...(args.length ? args : CITUS_SUITES),
    ],
    {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      env: { ...process.env, DATABASE_URL: cluster.url },
      stdio: 'inherit',
    },
  );
  [code] = (await once(vitest, 'exit')) as [number | null];
} finally {
  cluster.stop();
}
process.exit(code ?? 1);
