import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A PostgreSQL primary and its streaming replica (pg_basebackup), on ports of their own, in a
 * temporary directory: the machine's shared cluster is never touched. Built with the server's own
 * binaries (`pg_config --bindir`) run as the `postgres` user, as Debian installs them.
 */
export interface ReplicaPair {
  primaryUrl: string;
  replicaUrl: string;
  stop(): void;
}

/** Why a pair cannot be built here, or undefined when it can. */
export function replicaPairUnavailable(): string | undefined {
  try {
    const bindir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    if (!existsSync(join(bindir, 'initdb')) || !existsSync(join(bindir, 'pg_basebackup')))
      return `no initdb / pg_basebackup in ${bindir}`;
    execFileSync('id', ['postgres'], { stdio: 'ignore' });
    if (process.getuid?.() !== 0) return 'building clusters runs their binaries as the postgres user: needs root';
    return undefined;
  } catch (err) {
    return `PostgreSQL server binaries or the postgres user are missing (${(err as Error).message})`;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startReplicaPair(): Promise<ReplicaPair> {
  const bindir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  const root = mkdtempSync(join(tmpdir(), 'aa-replica-'));
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(root, uid, gid);
  const asPostgres = (binary: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', join(bindir, binary), ...args], { cwd: root, stdio: 'pipe' });
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const primary = join(root, 'primary');
  const replica = join(root, 'replica');
  const options = (port: number) =>
    `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c autovacuum=off -c fsync=off -c max_connections=60`;
  const started: string[] = [];
  const stop = () => {
    for (const dir of started.reverse()) {
      try {
        asPostgres('pg_ctl', ['-D', dir, '-m', 'immediate', 'stop']);
      } catch {
        // already stopped
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    asPostgres('initdb', ['-D', primary, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    asPostgres('pg_ctl', [
      '-D',
      primary,
      '-o',
      `${options(primaryPort)} -c wal_level=replica -c max_wal_senders=4`,
      '-l',
      join(root, 'primary.log'),
      '-w',
      'start',
    ]);
    started.push(primary);
    asPostgres('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replica,
      '-R',
      '-X',
      'stream',
    ]);
    asPostgres('pg_ctl', [
      '-D',
      replica,
      '-o',
      `${options(replicaPort)} -c hot_standby=on`,
      '-l',
      join(root, 'replica.log'),
      '-w',
      'start',
    ]);
    started.push(replica);
  } catch (err) {
    stop();
    throw err;
  }
  return {
    primaryUrl: `postgres://postgres@127.0.0.1:${primaryPort}/postgres`,
    replicaUrl: `postgres://postgres@127.0.0.1:${replicaPort}/postgres`,
    stop,
  };
}
