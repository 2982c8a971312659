import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'vitest';

/** Debian's pgbouncer (`apt-get install -y pgbouncer`, which .ci/run does). */
export const PGBOUNCER_PATH = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((path) => existsSync(path));

/**
 * The PgBouncer suites need a real PostgreSQL and the pgbouncer binary. On a laptop without either
 * they skip themselves; under CI=true they never do: a missing binary fails the run (see the
 * `it.runIf(process.env.CI)` check in pgbouncer.test.ts).
 */
export const describeWithPgBouncer =
  (process.env.DATABASE_URL || process.env.CI) && (PGBOUNCER_PATH || process.env.CI) ? describe : describe.skip;

/** A TCP port nobody listens on right now (the kernel's pick); the caller binds it at once. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface PgBouncerOptions {
  /**
   * The PostgreSQL it pools (the machine's, e.g. from DATABASE_URL). With a password in the URL,
   * clients must give that password (`auth_type = scram-sha-256`), and PgBouncer gives it to the server.
   */
  target: URL;
  poolMode?: 'transaction' | 'session';
  /** Server connections per database/user pair. */
  poolSize?: number;
  /** Further `[pgbouncer]` settings, as written in pgbouncer.ini. */
  settings?: Record<string, string | number>;
}

export interface PgBouncer {
  port: number;
  /** `target` with its host and port replaced by this PgBouncer's: same user, same database. */
  urlFor(databaseUrl: string): string;
  /** What pgbouncer wrote to stderr (its log). */
  log: string[];
  stop(): Promise<void>;
}

/**
 * Starts Debian's pgbouncer on a free port of 127.0.0.1, with a config file written to a temp dir:
 * every database of the target server (`* =`), `auth_type = trust` for the user in its auth file
 * (`scram-sha-256` with the target URL's password when it has one),
 * the pool mode, and otherwise PgBouncer's defaults (e.g. no `ignore_startup_parameters`) unless
 * the test sets more. pgbouncer refuses to run as root, so under root it runs as `postgres`.
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  if (!PGBOUNCER_PATH) throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer; .ci/run does)');
  const dir = mkdtempSync(join(tmpdir(), 'aa-pgbouncer-'));
  const user = decodeURIComponent(options.target.username || 'postgres');
  const password = decodeURIComponent(options.target.password);
  // A double quote inside a userlist field is written twice.
  const quoted = (field: string) => `"${field.replaceAll('"', '""')}"`;
  // With a password in the target URL, PgBouncer asks clients for it (SCRAM) and logs in to the
  // server with it, as the README's recipe has it; without one, it trusts its clients.
  writeFileSync(join(dir, 'userlist.txt'), `${quoted(user)} ${quoted(password)}\n`);
  const settings: Record<string, string | number> = {
    listen_addr: '127.0.0.1',
    unix_socket_dir: '',
    auth_type: password ? 'scram-sha-256' : 'trust',
    auth_file: join(dir, 'userlist.txt'),
    pool_mode: options.poolMode ?? 'transaction',
    default_pool_size: options.poolSize ?? 10,
    ...options.settings,
  };
  const databases = `* = host=${options.target.hostname} port=${options.target.port || 5432}`;
  let lastError: unknown;
  // The port is free when picked but could be taken before pgbouncer binds it: try a few.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const ini = join(dir, 'pgbouncer.ini');
    writeFileSync(
      ini,
      `[databases]\n${databases}\n\n[pgbouncer]\nlisten_port = ${port}\n${Object.entries(settings)
        .map(([k, v]) => `${k} = ${v}`)
        .join('\n')}\n`,
    );
    const asRoot = process.getuid?.() === 0;
    if (asRoot) spawnSync('chmod', ['-R', 'a+rX', dir]);
    const child: ChildProcess = spawn(PGBOUNCER_PATH, asRoot ? ['-u', 'postgres', ini] : [ini], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log: string[] = [];
    const collect = (chunk: Buffer) => log.push(...chunk.toString().split('\n').filter(Boolean));
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const exited = once(child, 'exit');
    const deadline = Date.now() + 10_000;
    let up = false;
    while (Date.now() < deadline && child.exitCode === null) {
      if (await accepts(port)) {
        up = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!up) {
      child.kill('SIGKILL');
      lastError = new Error(`pgbouncer did not start on port ${port}: ${log.join('\n')}`);
      continue;
    }
    return {
      port,
      log,
      urlFor(databaseUrl: string) {
        const url = new URL(databaseUrl);
        url.hostname = '127.0.0.1';
        url.port = String(port);
        return url.toString();
      },
      async stop() {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGINT');
          const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
          await exited;
          clearTimeout(timer);
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}
