import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { freePort } from './support/pgbouncer.js';
import {
  call,
  conversionCounts,
  createMerchantOn,
  describeWithPostgres,
  startService,
  stopService,
  waitFor,
  type ServiceProcess,
} from './support/service.js';

/** Debian's haproxy (`apt-get install -y haproxy`, which .ci/run does). */
const HAPROXY_PATH = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path));
const describeWithHaproxy =
  (process.env.DATABASE_URL || process.env.CI) && (HAPROXY_PATH || process.env.CI) ? describe : describe.skip;

const RECIPE = fileURLToPath(new URL('../../docs/operations.md', import.meta.url));
const CLIENTS = 16;

/**
 * The rolling-restart recipe of docs/operations.md (its ```haproxy block), with the test's addresses:
 * the test runs what the documentation tells an operator to run, so it cannot drift from it.
 */
function documentedHaproxyConfig(frontendPort: number, serverPorts: number[]): string {
  const block = /```haproxy\n([\s\S]*?)```/.exec(readFileSync(RECIPE, 'utf8'))?.[1];
  if (!block) throw new Error('docs/operations.md has no ```haproxy block');
  const servers = block.match(/^\s*server .*$/gm) ?? [];
  expect(servers).toHaveLength(serverPorts.length);
  let config = block.replace(/^(\s*bind) :80$/m, `$1 127.0.0.1:${frontendPort}`);
  servers.forEach((line, i) => {
    config = config.replace(line, line.replace(/\S+:3000/, `127.0.0.1:${serverPorts[i]}`));
  });
  expect(config).toContain(`bind 127.0.0.1:${frontendPort}`);
  return config;
}

interface Haproxy {
  /** Which servers haproxy now routes to (operational state "running", by its checks). */
  serversUp(): Promise<string[]>;
  stop(): Promise<void>;
}

async function startHaproxy(readmeConfig: string): Promise<Haproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'aa-haproxy-'));
  const file = join(dir, 'haproxy.cfg');
  const socket = join(dir, 'admin.sock');
  // The test's own addition: a stats socket, to see what haproxy thinks of each server.
  const config = `global\n    stats socket ${socket} level admin\n\n${readmeConfig}`;
  writeFileSync(file, config);
  const check = spawn(HAPROXY_PATH!, ['-c', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const checkOutput: string[] = [];
  check.stdout.on('data', (c: Buffer) => checkOutput.push(c.toString()));
  check.stderr.on('data', (c: Buffer) => checkOutput.push(c.toString()));
  const [code] = await once(check, 'exit');
  if (code !== 0) throw new Error(`haproxy -c refused the documented config: ${checkOutput.join('')}\n${config}`);
  const child: ChildProcess = spawn(HAPROXY_PATH!, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  child.stdout!.on('data', (c: Buffer) => log.push(c.toString()));
  child.stderr!.on('data', (c: Buffer) => log.push(c.toString()));
  const exited = once(child, 'exit');
  return {
    async serversUp() {
      if (child.exitCode !== null) throw new Error(`haproxy exited: ${log.join('')}`);
      const answer = await new Promise<string>((resolve) => {
        const connection = connect(socket);
        let text = '';
        connection.on('data', (chunk) => (text += chunk.toString()));
        connection.on('error', () => resolve(''));
        connection.on('close', () => resolve(text));
        connection.on('connect', () => connection.write('show servers state affiliates\n'));
      });
      // `be_id be_name srv_id srv_name srv_addr srv_op_state …`; op state 2 is running.
      return answer
        .split('\n')
        .map((line) => line.split(' '))
        .filter((fields) => fields[1] === 'affiliates' && fields[5] === '2')
        .map((fields) => fields[3]);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A rolling restart under load, as an operator runs one: two instances behind haproxy configured
 * as docs/operations.md says, clicks and conversions from 16 keep-alive clients; SIGTERM to one instance,
 * a new one started on its port once it has exited, then the same for the other. With the
 * service's default settings, the clients see no error at all, and every conversion they were
 * told about is stored once.
 */
describeWithHaproxy('rolling restart behind haproxy (the docs/operations.md recipe)', () => {
  let db: TestDatabase;
  const instances: (ServiceProcess | undefined)[] = [];
  let haproxy: Haproxy | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await haproxy?.stop();
    await Promise.all(instances.map(stopService));
    await db?.stop();
  });

  it.runIf(process.env.CI)('CI has haproxy (.ci/run installs it), so this suite never skips there', () => {
    expect(HAPROXY_PATH, 'apt-get install -y haproxy').toBeDefined();
  });

  /**
   * Two instances behind haproxy with `config`, a load from CLIENTS clients, and each instance in
   * turn (or only the first) stopped with SIGTERM and replaced on its port: every answer must be a 201.
   */
  async function rollingRestart(
    label: string,
    config: (frontend: number, ports: number[]) => string,
    restart: number[] = [0, 1],
  ): Promise<void> {
    await haproxy?.stop();
    await Promise.all(instances.splice(0).map(stopService));
    const ports = [await freePort(), await freePort()];
    const frontend = await freePort();
    const started = await Promise.all(ports.map((port) => startService(db.url, { PORT: String(port) })));
    instances.push(...started);
    haproxy = await startHaproxy(config(frontend, ports));
    const baseUrl = `http://127.0.0.1:${frontend}`;
    const proxy = haproxy;
    await waitFor(async () => (await proxy.serversUp()).length === 2, 15_000, 'haproxy to see both instances ready');
    const merchant = await createMerchantOn(baseUrl);

    const statuses: Record<string, number> = {};
    const failures: string[] = [];
    const acknowledged: string[] = [];
    let running = true;
    let n = 0;
    const worker = async () => {
      while (running) {
        const i = n++;
        const externalId = `roll-${label}-${i}`;
        try {
          const res =
            i % 2 === 0
              ? await call(baseUrl, 'POST', '/api/clicks', { key: merchant.key, body: { ref: merchant.slug } })
              : await call(baseUrl, 'POST', '/api/conversions', {
                  key: merchant.key,
                  body: { external_id: externalId, amount: 10, ref: merchant.slug },
                });
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status === 201 && i % 2 === 1) acknowledged.push(externalId);
          if (res.status !== 201 && failures.length < 10) failures.push(`${res.status} ${JSON.stringify(res.body)}`);
        } catch (err) {
          statuses.error = (statuses.error ?? 0) + 1;
          if (failures.length < 10) failures.push(String(err));
        }
      }
    };
    const workers = Array.from({ length: CLIENTS }, worker);

    const restarts: string[] = [];
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const index of restart) {
      const old = instances[index]!;
      const servedBefore = n;
      const signalledAt = Date.now();
      old.child.kill('SIGTERM');
      const exit = await old.exited;
      expect(exit.code, old.stderr.join('\n')).toBe(0);
      const stoppedMs = Date.now() - signalledAt;
      // haproxy marked it down while it drained, before it stopped listening.
      expect(await proxy.serversUp()).toHaveLength(1);
      const replacement = await startService(db.url, { PORT: String(ports[index]) });
      instances[index] = replacement;
      // Down in haproxy's eyes at some point, then up again (`rise 2` checks answered).
      await waitFor(
        async () => (await proxy.serversUp()).length === 2,
        15_000,
        'haproxy to see the new instance ready',
      );
      // Let traffic reach the new instance before the next one stops.
      await waitFor(
        () => replacement.logs.some((l) => (l.req as { url?: string } | undefined)?.url?.startsWith('/api/')),
        10_000,
        'traffic on the new instance',
      );
      restarts.push(
        `instance ${index + 1}: stopped in ${stoppedMs} ms, replaced; ${n - servedBefore} requests meanwhile`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    running = false;
    await Promise.all(workers);

    console.info(
      `[rolling-restart] ${label}: ${n} requests from ${CLIENTS} clients through haproxy across the restart of ${restart.length} of 2 instances: ${JSON.stringify(statuses)}; ${restarts.join('; ')}`,
    );
    expect(failures, JSON.stringify(statuses)).toEqual([]);
    const counts = await conversionCounts(db.url, merchant.organizationId);
    expect(acknowledged.filter((id) => counts.get(id) !== 1)).toEqual([]);
  }

  it(
    'SIGTERM to each of two instances in turn under load, the documented recipe and default settings: 0 client errors',
    { timeout: 120_000 },
    async () => {
      await rollingRestart('recipe', documentedHaproxyConfig);
    },
  );

  it(
    'SIGTERM under load behind a balancer that never retries (the recipe without its retry lines): the drain delay alone, 0 client errors',
    { timeout: 120_000 },
    async () => {
      await rollingRestart(
        'no-retries',
        (frontend, ports) => {
          // haproxy retries a refused connection 3 times by default: `retries 0` turns that off too.
          const config = documentedHaproxyConfig(frontend, ports)
            .replace(/^(\s*)retries \d+$/m, '$1retries 0')
            .replace(/^\s*(option redispatch|retry-on)\b.*$/gm, '');
          expect(config).toMatch(/^\s*retries 0$/m);
          expect(config).not.toMatch(/^\s*(option redispatch|retry-on)\b/m);
          return config;
        },
        [0],
      );
    },
  );
});

describeWithPostgres('the drain delay', () => {
  let db: TestDatabase;
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await stopService(service);
    await db?.stop();
  });

  it(
    'after SIGTERM: /ready 503 while requests are still served (drain delay 5 s by default); a second signal ends the wait',
    { timeout: 60_000 },
    async () => {
      service = await startService(db.url);
      const running = service;
      const signalledAt = Date.now();
      running.child.kill('SIGTERM');
      await waitFor(
        async () => (await call(running.url, 'GET', '/ready')).status === 503,
        2_000,
        '/ready to answer 503',
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // Still serving (a balancer that has not yet noticed loses nothing), telling clients to reconnect.
      const health = await call(running.url, 'GET', '/health');
      expect(health.status).toBe(200);
      expect(health.headers.get('connection')).toBe('close');
      expect(running.logs.find((l) => l.signal === 'SIGTERM')?.drainDelayMs).toBe(5_000);
      running.child.kill('SIGINT');
      const exit = await running.exited;
      expect(exit.code).toBe(0);
      expect(Date.now() - signalledAt).toBeLessThan(4_500);
    },
  );
});
