import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe } from 'vitest';

export const ADMIN_TOKEN = 'reliability-admin-token-0123456789';
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Tests that run the real service as child processes (kill -9, SIGTERM, several instances) need a
 * real PostgreSQL: locally they are skipped without DATABASE_URL; under CI=true they never are
 * (createTestDatabase then fails the run).
 */
export const describeWithPostgres = process.env.DATABASE_URL || process.env.CI ? describe : describe.skip;

export interface ServiceProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Resolves with the exit code / signal once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Log lines (parsed JSON) the service wrote to stdout. */
  logs: Record<string, unknown>[];
  stderr: string[];
}

/**
 * Starts `node --import tsx server/src/main.ts` (or node with `args`: a built bundle) on
 * `databaseUrl` and waits until it listens.
 */
export async function startService(
  databaseUrl: string,
  env: Record<string, string> = {},
  args: string[] = ['--import', 'tsx', 'server/src/main.ts'],
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      // Required with PORT=0 (config.ts): no test of these processes follows a link they hand out.
      PUBLIC_BASE_URL: 'http://127.0.0.1',
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN,
      LOG_LEVEL: 'info',
      DB_POOL_MAX: '5',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  let resolvePort!: (port: number) => void;
  const portKnown = new Promise<number>((resolve) => (resolvePort = resolve));
  // Both pipes are drained for the life of the process: a full pipe would block the service.
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (typeof entry.port === 'number' && /listening/.test(String(entry.msg))) resolvePort(entry.port);
    } catch {
      logs.push({ raw: line });
    }
  });
  createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line));
  const port = await Promise.race([
    portKnown,
    exited.then((e) => {
      throw new Error(
        `service exited before listening (${JSON.stringify(e)}): ${stderr.join('\n')} ${logs
          .slice(-3)
          .map((l) => JSON.stringify(l))
          .join('\n')}`,
      );
    }),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('service did not start within 60 s')), 60_000).unref(),
    ),
  ]).catch((err: unknown) => {
    // A service that never listened is no test's to stop: killed here, or it would outlive the
    // run, retrying its dropped database and loading the machine.
    child.kill('SIGKILL');
    throw err;
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, child, exited, logs, stderr };
}

export async function stopService(service: ServiceProcess | undefined): Promise<void> {
  if (!service || service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGKILL');
  await service.exited;
}

export interface JsonResponse {
  status: number;
  body: any;
  headers: Headers;
}

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; admin?: boolean; timeoutMs?: number } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = {};
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(baseUrl + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the assertion shows the text
  }
  return { status: res.status, body, headers: res.headers };
}

/** An organization with a program and an affiliate, created through the service's own API. */
export async function createMerchantOn(baseUrl: string) {
  const org = await call(baseUrl, 'POST', '/admin/organizations', {
    admin: true,
    body: { name: `Reliability ${Date.now()}` },
  });
  if (org.status !== 201) throw new Error(`create organization: ${org.status} ${JSON.stringify(org.body)}`);
  const key: string = org.body.data.api_key;
  const program = await call(baseUrl, 'POST', '/api/programs', { key, body: { name: 'Main', commission_value: 25 } });
  if (program.status !== 201) throw new Error(`create program: ${program.status}`);
  const slug = `rel-${Math.random().toString(36).slice(2, 10)}`;
  const affiliate = await call(baseUrl, 'POST', '/api/affiliates', {
    key,
    body: { email: `${slug}@example.com`, program_id: program.body.data.program.id, slug },
  });
  if (affiliate.status !== 201) throw new Error(`create affiliate: ${affiliate.status}`);
  return {
    organizationId: org.body.data.organization.id as string,
    key,
    programId: program.body.data.program.id as string,
    affiliateId: affiliate.body.data.affiliate.id as string,
    slug,
  };
}

export interface LoadResult {
  /** external_ids sent (request started). */
  sent: string[];
  /** external_ids answered 2xx. */
  acknowledged: string[];
  /** Status counts of the answers received (network failures under "error"). */
  statuses: Record<string, number>;
  /** Error bodies that were not the envelope (must stay empty). */
  malformedErrors: unknown[];
}

/**
 * `concurrency` clients posting conversions with fresh external_ids until `stop()` resolves. Every
 * second conversion also creates its customer (click attribution by ref with a new customer_id),
 * so a torn transaction would show as a customer without its conversion.
 */
export function conversionLoad(baseUrl: () => string, key: string, slug: string, concurrency: number, prefix: string) {
  const result: LoadResult = { sent: [], acknowledged: [], statuses: {}, malformedErrors: [] };
  let running = true;
  let counter = 0;
  const worker = async () => {
    while (running) {
      const n = counter++;
      const externalId = `${prefix}-${n}`;
      const body: Record<string, unknown> = { external_id: externalId, amount: 10 + (n % 90), ref: slug };
      if (n % 2 === 0) body.customer_id = `${prefix}-cus-${n}`;
      result.sent.push(externalId);
      try {
        const res = await call(baseUrl(), 'POST', '/api/conversions', { key, body, timeoutMs: 20_000 });
        result.statuses[res.status] = (result.statuses[res.status] ?? 0) + 1;
        if (res.status >= 200 && res.status < 300) result.acknowledged.push(externalId);
        else if (!isEnvelope(res.body)) result.malformedErrors.push(res.body);
      } catch {
        result.statuses.error = (result.statuses.error ?? 0) + 1;
        // Connection refused or reset: back off a little rather than spin.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  return {
    result,
    async stop(): Promise<LoadResult> {
      running = false;
      await Promise.all(workers);
      return result;
    },
  };
}

export function isEnvelope(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    Object.keys(body).sort().join(',') === 'message,success' &&
    (body as { success: unknown }).success === false &&
    typeof (body as { message: unknown }).message === 'string'
  );
}

export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Direct SQL on the test's database, bypassing the service: what is really stored. */
export async function withDatabase<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Per external_id, how many conversion rows exist for this organization. */
export async function conversionCounts(url: string, organizationId: string): Promise<Map<string, number>> {
  return withDatabase(url, async (client) => {
    const { rows } = await client.query<{ external_id: string; n: string }>(
      'select external_id, count(*) as n from conversions where organization_id = $1 group by external_id',
      [organizationId],
    );
    return new Map(rows.map((r) => [r.external_id, Number(r.n)]));
  });
}

/**
 * A TCP proxy between the service and PostgreSQL that the test can cut and restore: what the
 * service sees when PostgreSQL restarts (connections reset, new ones refused), without touching
 * the machine's shared PostgreSQL, which other test runs use at the same time.
 */
export async function startTcpProxy(targetHost: string, targetPort: number) {
  const sockets = new Set<Socket>();
  let up = true;
  const server: Server = createServer((client) => {
    if (!up) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return {
    port,
    /** PostgreSQL "goes down": every open connection is reset, new ones are refused. */
    cut() {
      up = false;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    restore() {
      up = true;
    },
    async close() {
      this.cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
