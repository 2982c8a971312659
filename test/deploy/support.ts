import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { fromRepoRoot } from '../../server/src/paths.js';

export const DEPLOY = {
  unit: fromRepoRoot('deploy/affiliate-attribution.service'),
  workerUnit: fromRepoRoot('deploy/affiliate-attribution-worker.service'),
  env: fromRepoRoot('deploy/affiliate-attribution.env'),
  haproxy: fromRepoRoot('deploy/haproxy.cfg'),
};

export const HAPROXY_PATH = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path));
export const SYSTEMD_ANALYZE_PATH = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((path) =>
  existsSync(path),
);
export const OPENSSL_PATH = ['/usr/bin/openssl', '/bin/openssl'].find((path) => existsSync(path));

/** A unit file's `[Section]` → `Key` → values (a key may repeat), as systemd reads it: `#`/`;` comments, no continuation lines used. */
export function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = new Map();
      sections.set(section[1], current);
      continue;
    }
    const pair = /^([A-Za-z0-9]+)=(.*)$/.exec(line);
    if (!pair || !current) throw new Error(`unit file: cannot read "${line}"`);
    current.set(pair[1], [...(current.get(pair[1]) ?? []), pair[2]]);
  }
  return sections;
}

/** An EnvironmentFile as systemd reads it: `KEY=value` lines, `#` comments, optional quotes around the value. */
export function parseEnvironmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const pair = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!pair) throw new Error(`environment file: cannot read "${line}"`);
    env[pair[1]] = pair[2].replace(/^"(.*)"$|^'(.*)'$/, '$1$2');
  }
  return env;
}

/** Runs a command to its end: exit code and output. */
export function run(command: string, args: string[]): { code: number | null; output: string } {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  return { code: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One request from a chosen local address (127.0.0.2, …: every 127/8 address is this machine),
 * so that the proxy sees distinct clients; over TLS verified against `ca` when given.
 */
export function fetchFrom(
  url: string,
  options: {
    localAddress?: string;
    ca?: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
  } = {},
): Promise<Answer> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host: '127.0.0.1',
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        headers: { host: target.host, ...options.headers },
        localAddress: options.localAddress,
        ...(target.protocol === 'https:' ? { ca: options.ca, servername: target.hostname } : {}),
        timeout: 10_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within 10 s`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface Child {
  process: ChildProcess;
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): Promise<void>;
}

export function startChild(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Child {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  return {
    process: child,
    output,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

export async function until<T>(what: string, attempt: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the last error caught (an Error: its name and message)
  throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (${String(last)})` : ''}`);
}

export const readText = (path: string) => readFileSync(path, 'utf8');

/**
 * A module for `node --import` that makes `packages` unresolvable in the process, as on a host where
 * only what runs is installed: the built service and worker must not need a compiler (tsx, esbuild).
 */
export function unresolvableHook(dir: string, packages: string[] = ['tsx', 'esbuild']): string {
  const file = join(dir, 'unresolvable.mjs');
  writeFileSync(
    file,
    `import { registerHooks } from 'node:module';
const blocked = ${JSON.stringify(packages)};
registerHooks({
  resolve(specifier, context, next) {
    if (blocked.some((name) => specifier === name || specifier.startsWith(name + '/'))) {
      throw Object.assign(new Error(specifier + ' is not installed here'), { code: 'ERR_MODULE_NOT_FOUND' });
    }
    return next(specifier, context);
  },
});
`,
  );
  return file;
}

/** The servers of `backend` haproxy now routes to (operational state 2, running), from its stats socket. */
export function serversUp(socket: string, backend: string): Promise<string[]> {
  return new Promise((resolve) => {
    const connection = connect(socket);
    let text = '';
    connection.on('data', (chunk) => (text += chunk.toString()));
    connection.on('error', () => resolve([]));
    connection.on('close', () =>
      resolve(
        text
          .split('\n')
          .map((line) => line.split(' '))
          .filter((fields) => fields[1] === backend && fields[5] === '2')
          .map((fields) => fields[3]),
      ),
    );
    connection.on('connect', () => connection.write(`show servers state ${backend}\n`));
  });
}
