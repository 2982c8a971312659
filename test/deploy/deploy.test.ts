import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { fromRepoRoot } from '../../server/src/paths.js';
import { freePort } from '../reliability/support/pgbouncer.js';
import { ADMIN_TOKEN, createMerchantOn } from '../reliability/support/service.js';
import { buildDashboard } from '../web/support/dashboard.js';
import {
  DEPLOY,
  HAPROXY_PATH,
  OPENSSL_PATH,
  SYSTEMD_ANALYZE_PATH,
  fetchFrom,
  parseEnvironmentFile,
  parseUnit,
  readText,
  run,
  serversUp,
  startChild,
  unresolvableHook,
  until,
  type Child,
} from './support.js';

/**
 * deploy/: the systemd unit, its environment file and the haproxy configuration that docs/deployment.md
 * installs, run as written: the unit's ExecStart with its EnvironmentFile on a new, empty database,
 * and haproxy serving it over TLS (a self-signed certificate) with the client's address and scheme
 * forwarded. What a test must change is named where it does (ports, the database, the certificate,
 * the node binary: the supported Node.js running this test, where the unit names /usr/bin/node).
 * Skipped only without a real PostgreSQL, haproxy, openssl or systemd-analyze, and never under CI.
 */
const CI = Boolean(process.env.CI);
const describeWithPostgres = process.env.DATABASE_URL || CI ? describe : describe.skip;
const itWith = (tool: string | undefined) => (tool || CI ? it : it.skip);
/** The secrets the environment file leaves empty for the operator to fill (docs/deployment.md). */
const SECRETS = ['ADMIN_TOKEN', 'AUTH_SECRET', 'ENCRYPTION_KEY', 'METRICS_TOKEN'];
/** The public endpoints' limit per client address, lowered so that a few requests reach it. */
const PUBLIC_LIMIT = 2;
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

const unit = parseUnit(readText(DEPLOY.unit));
const service = unit.get('Service')!;
const workerService = parseUnit(readText(DEPLOY.workerUnit)).get('Service')!;
const oneOf = (section: Map<string, string[]>) => (key: string) => {
  const values = section.get(key) ?? [];
  expect(values, key).toHaveLength(1);
  return values[0];
};
const one = oneOf(service);
const workerOne = oneOf(workerService);
const scripts = () =>
  (JSON.parse(readText(fromRepoRoot('package.json'))) as { scripts: Record<string, string> }).scripts;

/** `npm run build`'s server half (the dashboard is buildDashboard's): the bundles and the snippet. */
function buildServer(): void {
  const built = run(process.execPath, ['--import', 'tsx', 'server/build.ts']);
  expect(built.code, built.output).toBe(0);
}

function haproxyConfig(
  ports: { http: number; https: number; service: number; more?: number[]; statsSocket?: string },
  pem: string,
): string {
  let config = readText(DEPLOY.haproxy);
  const replace = (pattern: RegExp, value: string) => {
    expect(config).toMatch(pattern);
    config = config.replace(pattern, value);
  };
  replace(/^(\s*bind) :80$/m, `$1 127.0.0.1:${ports.http}`);
  replace(/^(\s*bind) :443 ssl crt \S+/m, `$1 127.0.0.1:${ports.https} ssl crt ${pem}`);
  replace(
    /^(\s*server app1) 127\.0\.0\.1:3000 (.*)$/m,
    [
      `$1 127.0.0.1:${ports.service} $2`,
      ...(ports.more ?? []).map((port, i) => `    server app${i + 2} 127.0.0.1:${port} $2`),
    ].join('\n'),
  );
  // The test's own addition: a stats socket, to see which instances haproxy routes to.
  if (ports.statsSocket) replace(/^global$/m, `global\n    stats socket ${ports.statsSocket} level admin`);
  // chroot and the switch to the haproxy user need root, as the packaged service has.
  if (process.getuid?.() !== 0) config = config.replace(/^\s*(chroot|user|group) .*$/gm, '');
  return config;
}

async function startHaproxy(config: string, dir: string, name: string): Promise<Child> {
  const file = join(dir, `${name}.cfg`);
  writeFileSync(file, config);
  const check = run(HAPROXY_PATH!, ['-c', '-f', file]);
  expect(check.code, `haproxy -c refused deploy/haproxy.cfg: ${check.output}`).toBe(0);
  return startChild(HAPROXY_PATH!, ['-db', '-f', file]);
}

describe('deploy/: the unit and its environment file, as files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aa-deploy-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the unit runs what `npm start` runs, unprivileged, restarted on failure, with its settings from the environment file', () => {
    expect(one('User')).not.toBe('root');
    expect(one('Restart')).toBe('on-failure');
    expect(one('EnvironmentFile')).toBe('/etc/affiliate-attribution/env');
    const [node, ...args] = one('ExecStart').split(/\s+/);
    expect(node).toMatch(/^\/.*\/node$/);
    expect(scripts().start).toContain(`node ${args.join(' ')}`);
    // Longer than the drain delay and the shutdown timeout together (their defaults: 5 s + 10 s).
    expect(Number.parseInt(one('TimeoutStopSec'), 10)).toBeGreaterThan(15);
  });

  it('the worker unit runs what `npm run worker` runs (the built JavaScript, no TypeScript loader), as the same user with the same settings', () => {
    const [node, ...args] = workerOne('ExecStart').split(/\s+/);
    expect(node).toMatch(/^\/.*\/node$/);
    expect(args).toEqual(['server/dist/worker.mjs']);
    expect(scripts().worker).toBe(`node ${args.join(' ')}`);
    expect(scripts().worker).not.toMatch(/tsx|\.ts\b/);
    for (const key of ['User', 'Group', 'WorkingDirectory', 'EnvironmentFile', 'Restart'])
      expect(workerOne(key), key).toBe(one(key));
    // Longer than the shutdown timeout and the worker's own grace together (their defaults: 10 s + 15 s).
    expect(Number.parseInt(workerOne('TimeoutStopSec'), 10)).toBeGreaterThan(25);
  });

  itWith(SYSTEMD_ANALYZE_PATH)('systemd-analyze verify finds nothing to say about either unit', () => {
    for (const file of [DEPLOY.unit, DEPLOY.workerUnit]) {
      const copy = join(dir, file.split('/').pop()!);
      // The units name /usr/bin/node; the machine's may be older than the supported one, or absent.
      writeFileSync(copy, readText(file).replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`));
      const result = run(SYSTEMD_ANALYZE_PATH!, ['verify', copy]);
      expect(
        result.output.split('\n').filter((line) => line.includes('affiliate-attribution')),
        file,
      ).toEqual([]);
      expect(result.code, file).toBe(0);
    }
  });

  it('the environment file is a valid configuration once its secrets are filled', () => {
    const env = parseEnvironmentFile(readText(DEPLOY.env));
    expect(
      Object.keys(env)
        .filter((key) => env[key] === '')
        .sort(),
    ).toEqual([...SECRETS].sort());
    const source = readText(fromRepoRoot('server/src/config.ts'));
    for (const key of Object.keys(env))
      expect(source, `${key} is a setting of config.ts`).toMatch(new RegExp(`^\\s+${key}: z`, 'm'));
    const config = loadConfig({
      ...env,
      ...Object.fromEntries(SECRETS.map((key) => [key, randomBytes(32).toString('hex')])),
    });
    expect(config).toMatchObject({ HOST: '127.0.0.1', TRUST_PROXY: 'loopback' });
  });
});

describeWithPostgres('deploy/: the unit started as written, behind the TLS reverse proxy', () => {
  let dir = '';
  const ports = { http: 0, https: 0, service: 0 };
  let database: { name: string; url: string } | undefined;
  let app: Child | undefined;
  let proxy: Child | undefined;
  let certificate = '';
  let publicUrl = '';
  // Filled once: every instance of one deployment shares them (ENCRYPTION_KEY, AUTH_SECRET).
  const secrets: Record<string, string> = {
    ...Object.fromEntries(SECRETS.map((key) => [key, randomBytes(32).toString('hex')])),
    ADMIN_TOKEN,
  };
  /** The unit's environment, as systemd gives it, for an instance on `port`. */
  const serviceEnv = (port: number): Record<string, string> => ({
    // What systemd gives a service besides its EnvironmentFile.
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    ...parseEnvironmentFile(readText(DEPLOY.env)),
    ...secrets,
    DATABASE_URL: database!.url,
    PORT: String(port),
    PUBLIC_BASE_URL: publicUrl,
    PUBLIC_RATE_LIMIT_MAX: String(PUBLIC_LIMIT),
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aa-deploy-'));
    ports.http = await freePort();
    ports.https = await freePort();
    ports.service = await freePort();
    publicUrl = `https://localhost:${ports.https}`;
    // `npm run build`: the dashboard (web/dist), the bundles the units run and the snippet.
    buildDashboard();
    buildServer();
    // A new, empty database: the service applies every migration itself at start.
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    const name = `aa_test_${process.env.AA_TEST_RUN ?? 'adhoc'}_deploy_${randomBytes(3).toString('hex')}`;
    await admin.query(`create database "${name}"`);
    await admin.end();
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    database = { name, url: url.toString() };
  }, 300_000);

  afterAll(async () => {
    await proxy?.kill();
    await app?.kill();
    if (database) {
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      await admin.query(`drop database if exists "${database.name}" with (force)`);
      await admin.end();
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ExecStart with the environment file starts the service on an empty database, and it answers /ready', async () => {
    const [, ...args] = one('ExecStart').split(/\s+/);
    // WorkingDirectory (/opt/affiliate-attribution) stands for a checkout built with `npm run build`: this one.
    app = startChild(process.execPath, args, { cwd: fromRepoRoot(''), env: serviceEnv(ports.service) });
    const ready = await until(
      'the service answers /ready',
      async () => {
        if (app!.process.exitCode !== null) throw new Error(`the service exited: ${app!.output.join('')}`);
        const answer = await fetchFrom(`http://127.0.0.1:${ports.service}/ready`);
        return answer.status === 200 ? answer : undefined;
      },
      120_000,
    );
    expect(JSON.parse(ready.body)).toEqual({ success: true, data: { status: 'ready', database: 'ok' } });
  });

  itWith(HAPROXY_PATH && OPENSSL_PATH)(
    'haproxy serves /ready and /dashboard over TLS, and redirects http to https',
    async () => {
      expect(app, 'the service was started by the test above').toBeDefined();
      const key = join(dir, 'key.pem');
      const cert = join(dir, 'cert.pem');
      const made = run(OPENSSL_PATH!, [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost',
      ]);
      expect(made.code, made.output).toBe(0);
      certificate = readText(cert);
      const pem = join(dir, 'affiliates.pem');
      writeFileSync(pem, certificate + readText(key));
      proxy = await startHaproxy(haproxyConfig(ports, pem), dir, 'haproxy');

      const ready = await until('/ready through haproxy', async () => {
        if (proxy!.process.exitCode !== null) throw new Error(`haproxy exited: ${proxy!.output.join('')}`);
        const answer = await fetchFrom(`${publicUrl}/ready`, { ca: certificate });
        return answer.status === 200 ? answer : undefined;
      });
      expect(JSON.parse(ready.body)).toEqual({ success: true, data: { status: 'ready', database: 'ok' } });
      expect(ready.headers['strict-transport-security']).toMatch(/max-age=\d+/);

      const dashboard = await fetchFrom(`${publicUrl}/dashboard`, { ca: certificate });
      expect(dashboard.status).toBe(200);
      expect(dashboard.headers['content-type']).toMatch(/^text\/html/);
      expect(dashboard.body).toContain('/dashboard/assets/');

      const plain = await fetchFrom(`http://localhost:${ports.http}/dashboard`);
      expect(plain.status).toBe(301);
      expect(plain.headers.location).toBe(`https://localhost:${ports.http}/dashboard`);
    },
  );

  itWith(HAPROXY_PATH && OPENSSL_PATH)(
    'the service sees each client by the address haproxy forwards, never by what the client claims',
    async () => {
      expect(proxy, 'haproxy was started by the test above').toBeDefined();
      const click = (localAddress: string, claimed: string) =>
        fetchFrom(`${publicUrl}/public/organizations/${randomUUID()}/clicks`, {
          ca: certificate,
          localAddress,
          method: 'POST',
          // A browser's user agent: a bot's click is answered 200 and never counted.
          headers: { 'content-type': 'application/json', 'user-agent': BROWSER, 'x-forwarded-for': claimed },
          body: JSON.stringify({ ref: 'nobody' }),
        });
      const first: number[] = [];
      for (let i = 0; i <= PUBLIC_LIMIT; i++) first.push((await click('127.0.0.2', `198.51.100.${i + 1}`)).status);
      // Over 127.0.0.2's limit, whatever address it claims; through the same proxy, 127.0.0.3 has its own.
      expect(first).toEqual([...Array<number>(PUBLIC_LIMIT).fill(404), 429]);
      expect((await click('127.0.0.3', '198.51.100.1')).status).toBe(404);
    },
  );

  itWith(HAPROXY_PATH && OPENSSL_PATH)(
    'haproxy replaces X-Forwarded-For and X-Forwarded-Proto and keeps the Host',
    async () => {
      expect(certificate).not.toBe('');
      const seen: Record<string, string | string[] | undefined>[] = [];
      const echo: Server = createServer((req, res) => {
        if (req.url !== '/ready') seen.push(req.headers);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
      await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
      const echoPort = (echo.address() as { port: number }).port;
      const echoPorts = { http: await freePort(), https: await freePort(), service: echoPort };
      const pem = join(dir, 'affiliates.pem');
      const echoProxy = await startHaproxy(haproxyConfig(echoPorts, pem), dir, 'haproxy-echo');
      try {
        const url = `https://localhost:${echoPorts.https}/anything`;
        await until('the echo server through haproxy', async () =>
          (await fetchFrom(url, { ca: certificate })).status === 200 ? true : undefined,
        );
        seen.length = 0;
        await fetchFrom(url, {
          ca: certificate,
          localAddress: '127.0.0.4',
          headers: { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'http' },
        });
        expect(seen).toHaveLength(1);
        expect(seen[0]).toMatchObject({
          'x-forwarded-for': '127.0.0.4',
          'x-forwarded-proto': 'https',
          host: `localhost:${echoPorts.https}`,
        });
      } finally {
        await echoProxy.kill();
        await new Promise<void>((resolve) => echo.close(() => resolve()));
      }
    },
  );

  itWith(HAPROXY_PATH && OPENSSL_PATH)(
    'an instance killed (SIGKILL) under steady requests: haproxy redispatches, the clients see no 503 and no reset',
    { timeout: 120_000 },
    async () => {
      expect(certificate).not.toBe('');
      // A second instance of the unit on the same database, and haproxy in front of both.
      const [, ...args] = one('ExecStart').split(/\s+/);
      const port2 = await freePort();
      const app2 = startChild(process.execPath, args, { cwd: fromRepoRoot(''), env: serviceEnv(port2) });
      const socket = join(dir, 'haproxy-two.sock');
      const twoPorts = {
        http: await freePort(),
        https: await freePort(),
        service: ports.service,
        more: [port2],
        statsSocket: socket,
      };
      const two = await startHaproxy(haproxyConfig(twoPorts, join(dir, 'affiliates.pem')), dir, 'haproxy-two');
      try {
        await until(
          'the second instance answers /ready',
          async () => {
            if (app2.process.exitCode !== null) throw new Error(`the second instance exited: ${app2.output.join('')}`);
            return (await fetchFrom(`http://127.0.0.1:${port2}/ready`)).status === 200 ? true : undefined;
          },
          120_000,
        );
        await until('haproxy routes to both instances', async () =>
          (await serversUp(socket, 'affiliates')).length === 2 ? true : undefined,
        );
        const merchant = await createMerchantOn(`http://127.0.0.1:${ports.service}`);
        const base = `https://localhost:${twoPorts.https}`;
        const statuses: Record<string, number> = {};
        const failures: string[] = [];
        const acknowledged: string[] = [];
        let running = true;
        let n = 0;
        const client = async () => {
          while (running) {
            const i = n++;
            const externalId = `kill-${i}`;
            try {
              // Idempotent both: a read, and a conversion by its external id.
              const answer =
                i % 2 === 0
                  ? await fetchFrom(`${base}/api/me`, {
                      ca: certificate,
                      headers: { authorization: `Bearer ${merchant.key}` },
                    })
                  : await fetchFrom(`${base}/api/conversions`, {
                      ca: certificate,
                      method: 'POST',
                      headers: { authorization: `Bearer ${merchant.key}`, 'content-type': 'application/json' },
                      body: JSON.stringify({ external_id: externalId, amount: 10, ref: merchant.slug }),
                    });
              statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
              if (answer.status < 300 && i % 2 === 1) acknowledged.push(externalId);
              if (answer.status >= 300 && failures.length < 10)
                failures.push(`${answer.status} ${answer.body.slice(0, 200)}`);
            } catch (err) {
              statuses.error = (statuses.error ?? 0) + 1;
              if (failures.length < 10) failures.push(String(err));
            }
          }
        };
        const clients = Array.from({ length: 8 }, client);
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        const before = n;
        app2.process.kill('SIGKILL');
        await app2.exited;
        // Until haproxy's checks mark it down (2 failed checks 1 s apart) and after.
        await until(
          'haproxy to mark the killed instance down',
          async () => ((await serversUp(socket, 'affiliates')).length === 1 ? true : undefined),
          15_000,
        );
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        running = false;
        await Promise.all(clients);
        console.info(
          `[deploy] instance killed behind deploy/haproxy.cfg: ${n} requests from 8 clients (${n - before} from the kill on): ${JSON.stringify(statuses)}`,
        );
        expect(failures, JSON.stringify(statuses)).toEqual([]);
        const admin = new pg.Client({ connectionString: database!.url });
        await admin.connect();
        try {
          const { rows } = await admin.query<{ external_id: string; count: string }>(
            'select external_id, count(*) from conversions where organization_id = $1 group by external_id',
            [merchant.organizationId],
          );
          const counts = new Map(rows.map((row) => [row.external_id, Number(row.count)]));
          expect(acknowledged.filter((id) => counts.get(id) !== 1)).toEqual([]);
        } finally {
          await admin.end();
        }
      } finally {
        await two.kill();
        await app2.kill();
      }
    },
  );

  itWith(HAPROXY_PATH && OPENSSL_PATH)(
    "haproxy's own errors are the service's JSON envelope: 503 with Retry-After when no instance answers, or when each closes unanswered",
    async () => {
      expect(certificate).not.toBe('');
      const pem = join(dir, 'affiliates.pem');
      // Nothing listens on the first port; the second accepts and closes every connection unanswered.
      const nobody = await freePort();
      const rude: NetServer = createNetServer((socket) => socket.once('data', () => socket.destroy()));
      await new Promise<void>((resolve) => rude.listen(0, '127.0.0.1', resolve));
      const downPorts = { http: await freePort(), https: await freePort(), service: nobody };
      const rudePorts = {
        http: await freePort(),
        https: await freePort(),
        service: (rude.address() as { port: number }).port,
      };
      const down = await startHaproxy(haproxyConfig(downPorts, pem), dir, 'haproxy-down');
      const closing = await startHaproxy(haproxyConfig(rudePorts, pem), dir, 'haproxy-rude');
      try {
        for (const https of [downPorts.https, rudePorts.https]) {
          const answer = await until('haproxy to answer', () =>
            fetchFrom(`https://localhost:${https}/api/me`, { ca: certificate }).catch(() => undefined),
          );
          expect(answer.status).toBe(503);
          expect(answer.headers['content-type']).toBe('application/json');
          expect(answer.headers['retry-after']).toBe('1');
          expect(JSON.parse(answer.body)).toEqual({
            success: false,
            message: 'Service unavailable: no instance is ready, retry shortly',
          });
        }
      } finally {
        await down.kill();
        await closing.kill();
        await new Promise<void>((resolve) => rude.close(() => resolve()));
      }
    },
  );

  it("the worker unit's ExecStart runs the built worker with plain node, tsx and esbuild unresolvable, and stops cleanly on SIGTERM", async () => {
    const [, ...args] = workerOne('ExecStart').split(/\s+/);
    const worker = startChild(process.execPath, ['--import', unresolvableHook(dir), ...args], {
      cwd: fromRepoRoot(''),
      env: serviceEnv(0),
    });
    try {
      await until(
        'the worker runs',
        async () => {
          if (worker.process.exitCode !== null) throw new Error(`the worker exited: ${worker.output.join('')}`);
          return worker.output.join('').includes('outbound events worker running') ? true : undefined;
        },
        60_000,
      );
      worker.process.kill('SIGTERM');
      const { code } = await worker.exited;
      expect(code, worker.output.join('')).toBe(0);
    } finally {
      await worker.kill();
    }
  }, 90_000);

  it("SIGTERM stops the service cleanly within the unit's TimeoutStopSec", async () => {
    expect(app, 'the service was started by the test above').toBeDefined();
    const started = Date.now();
    app!.process.kill('SIGTERM');
    const { code } = await app!.exited;
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(Number.parseInt(one('TimeoutStopSec'), 10) * 1000);
  }, 60_000);
});
