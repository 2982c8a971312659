import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './pgbouncer.js';

/**
 * A PostgreSQL cluster of the test's own, in a temporary directory on a free port, that asks for a
 * password over TCP (`scram-sha-256`, PostgreSQL 15's default): what an operator's server does,
 * and what the machine's shared cluster (trust authentication, never reconfigured) cannot show.
 * Built with the server's own binaries (`pg_config --bindir`) run as the `postgres` user, as
 * Debian installs them; the password is set over the cluster's own Unix socket, the only way in
 * without one.
 */
export interface OwnCluster {
  /** `postgres://postgres:<password, percent-encoded>@127.0.0.1:<port>/postgres`. */
  url: string;
  port: number;
  password: string;
  /** The server's log file (why a connection was refused). */
  logFile: string;
  stop(): void;
}

/**
 * A password with every character a URL must percent-encode in its user-info part, a percent sign,
 * quotes, a backslash, a space and non-ASCII letters: a password that survives these survives any.
 */
export const AWKWARD_PASSWORD = `p@ss:w/rd%25?#&=+ "q" 'q' \\ ü€😀`;

/** Why a cluster cannot be built here, or undefined when it can. */
export function ownClusterUnavailable(): string | undefined {
  try {
    const bindir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    for (const binary of ['initdb', 'pg_ctl', 'psql'])
      if (!existsSync(join(bindir, binary))) return `no ${binary} in ${bindir}`;
    execFileSync('id', ['postgres'], { stdio: 'ignore' });
    if (process.getuid?.() !== 0) return 'building a cluster runs its binaries as the postgres user: needs root';
    return undefined;
  } catch (err) {
    return `PostgreSQL server binaries or the postgres user are missing (${(err as Error).message})`;
  }
}

/** The URL of `user` with `password` on this host and port, percent-encoded as a URL must be. */
export function urlWithPassword(port: number, password: string, database = 'postgres', user = 'postgres'): string {
  return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

export async function startOwnCluster(
  options: { password?: string; maxConnections?: number } = {},
): Promise<OwnCluster> {
  const password = options.password ?? AWKWARD_PASSWORD;
  const bindir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  const root = mkdtempSync(join(tmpdir(), 'aa-cluster-'));
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(root, uid, gid);
  const asPostgres = (binary: string, args: string[], input?: string) =>
    execFileSync('runuser', ['-u', 'postgres', '--', join(bindir, binary), ...args], {
      cwd: root,
      stdio: 'pipe',
      input,
    });
  const data = join(root, 'data');
  const logFile = join(root, 'postgres.log');
  const port = await freePort();
  let started = false;
  const stop = () => {
    if (started) {
      try {
        asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } catch {
        // already stopped
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    // TCP asks for the password; the Unix socket (in the temp dir, reachable by root and postgres only) does not.
    asPostgres('initdb', [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '-E',
      'UTF8',
    ]);
    const settings = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=${options.maxConnections ?? 100}`;
    asPostgres('pg_ctl', ['-D', data, '-o', settings, '-l', logFile, '-w', 'start']);
    started = true;
    // psql's :'name' quotes the variable as a literal, whatever it contains (only from a script, not -c).
    asPostgres(
      'psql',
      [
        '-X',
        '-q',
        '-v',
        'ON_ERROR_STOP=1',
        '-v',
        `password=${password}`,
        '-h',
        root,
        '-p',
        String(port),
        '-U',
        'postgres',
        '-d',
        'postgres',
      ],
      "alter role postgres password :'password';\n",
    );
  } catch (err) {
    stop();
    throw err;
  }
  return { url: urlWithPassword(port, password), port, password, logFile, stop };
}
