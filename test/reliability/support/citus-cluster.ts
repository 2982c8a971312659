import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './pgbouncer.js';

/**
 * A Citus cluster of the test's own: a coordinator and two workers on free ports, in a temporary
 * directory, run as the postgres user with the machine's PostgreSQL binaries (the recipe of
 * ../shared/vendor/citus/README.md and docs/scaling.md). `wal_level = logical` so that a shard can
 * move between workers without blocking writes (citus_move_shard_placement).
 */
export interface CitusCluster {
  /** The coordinator's `postgres` database: where the service's DATABASE_URL points. */
  url: string;
  coordinatorPort: number;
  workerPorts: number[];
  /** The directory holding the nodes' data and logs. */
  root: string;
  stop(): void;
}

/** Why a Citus cluster cannot be built here, or undefined when it can. */
export function citusUnavailable(): string | undefined {
  try {
    const bindir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    for (const binary of ['initdb', 'pg_ctl', 'psql'])
      if (!existsSync(join(bindir, binary))) return `no ${binary} in ${bindir}`;
    const share = execFileSync('pg_config', ['--sharedir'], { encoding: 'utf8' }).trim();
    if (!existsSync(join(share, 'extension', 'citus.control')))
      return `Citus is not installed into this PostgreSQL (no ${join(share, 'extension', 'citus.control')}; run ../shared/vendor/citus/build.sh)`;
    execFileSync('id', ['postgres'], { stdio: 'ignore' });
    if (process.getuid?.() !== 0) return 'building a cluster runs its binaries as the postgres user: needs root';
    return undefined;
  } catch (err) {
    return `PostgreSQL server binaries or the postgres user are missing (${(err as Error).message})`;
  }
}

export async function startCitusCluster(options: { workers?: number } = {}): Promise<CitusCluster> {
  const bindir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  const root = mkdtempSync(join(tmpdir(), 'aa-citus-'));
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(root, uid, gid);
  const asPostgres = (binary: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', join(bindir, binary), ...args], { cwd: root, stdio: 'pipe' });
  const names = ['coordinator', ...Array.from({ length: options.workers ?? 2 }, (_, i) => `worker${i + 1}`)];
  const ports: number[] = [];
  for (const _ of names) ports.push(await freePort());
  const started: string[] = [];
  const stop = () => {
    for (const data of started.reverse()) {
      try {
        asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } catch {
        // already stopped
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  const sql = (port: number, statement: string) =>
    asPostgres('psql', [
      '-X',
      '-q',
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      root,
      '-p',
      String(port),
      '-U',
      'postgres',
      '-c',
      statement,
    ]);
  try {
    names.forEach((name, i) => {
      const data = join(root, name);
      asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
      const settings = [
        `-p ${ports[i]}`,
        `-k ${root}`,
        '-c listen_addresses=127.0.0.1',
        '-c shared_preload_libraries=citus',
        '-c wal_level=logical',
        '-c fsync=off',
        '-c synchronous_commit=off',
        '-c full_page_writes=off',
        '-c max_connections=300',
        '-c max_worker_processes=32',
        '-c max_wal_senders=20',
        '-c max_replication_slots=20',
        // Fewer shards than Citus's default 32: the suites create a database per worker, each
        // with every table's shards, and the catalog scans of some tests read every shard.
        '-c citus.shard_count=8',
      ].join(' ');
      asPostgres('pg_ctl', ['-D', data, '-o', settings, '-l', join(root, `${name}.log`), '-w', 'start']);
      started.push(data);
      sql(ports[i], 'create extension citus');
    });
    sql(ports[0], `select citus_set_coordinator_host('127.0.0.1', ${ports[0]})`);
    for (const port of ports.slice(1)) sql(ports[0], `select citus_add_node('127.0.0.1', ${port})`);
  } catch (err) {
    stop();
    throw err;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${ports[0]}/postgres`,
    coordinatorPort: ports[0],
    workerPorts: ports.slice(1),
    root,
    stop,
  };
}
