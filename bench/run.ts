/**
 * npm run bench: the service against a hand-written raw floor (bench/raw-server.ts), on the same
 * fresh PostgreSQL database, alternated A B A B under the same load (autocannon, 32 connections,
 * fixed duration). Prints requests/s, p50/p99 latency, errors and the service/raw ratio per
 * endpoint, and the service's peak RSS. With --seeded it then stores 2 million clicks and 200
 * thousand conversions and measures the service again against its empty-database figures.
 *
 * Environment: DATABASE_URL (a PostgreSQL the bench may create a database on; default the local
 * one), BENCH_DURATION seconds per run (default 10), BENCH_WARMUP seconds of uncounted load per
 * endpoint and server before its runs (default 5), BENCH_CONNECTIONS (default 32), BENCH_ONLY
 * (run only the endpoints whose name contains it, e.g. `clicks`, while tuning), BENCH_ENDPOINT=1 (the
 * organization gets a webhook endpoint subscribed to every event, so each write also writes its
 * outbox rows; run with WEBHOOK_ALLOW_PRIVATE_URLS=true, and WEBHOOK_DELIVERY=off to measure the
 * writes without the delivery work: `npm run bench:events` measures that), BENCH_DIAG=1 (after each
 * run, names any PostgreSQL backend of either server that used more than half of one core through
 * it, with what it is running: a run far below the others is then explained, not averaged in).
 * Targets only 127.0.0.1; every run is bounded in time.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { bundle } from '../server/bundle.js';
import pg from 'pg';
import { OUTBOUND_EVENT_TYPES } from '../contract/src/index.js';
import { TICK_MS, machineTicks, startNodeFlags, waitFor } from './service-process.js';
import { cpuSnapshot, cpuSpentMs, reportBusyBackends, type Server } from './cpu-accounting.js';

const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const SEEDED = process.argv.includes('--seeded');
const ONLY = process.env.BENCH_ONLY;
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const SERVICE_PORT = Number(process.env.BENCH_PORT ?? 4101);
const RAW_PORT = SERVICE_PORT + 1;

const dbName = `aa_bench_${randomBytes(3).toString('hex')}`;
const dbUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${dbName}`;
  return u.toString();
})();

interface Run {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time (user + system) per request answered, in ms: of the server's process, and of its PostgreSQL backends. */
  cpuNode: number;
  cpuDb: number;
  /** The machine during the run: the share of its CPU time left idle, and the share stolen by the hypervisor. */
  idle: number;
  steal: number;
  /** CPU ms per request of everything else on the machine: the load generator (this process), PostgreSQL's own background processes (WAL writer, checkpointer), other work. */
  cpuOther: number;
}

/** Both servers run as plain JavaScript bundles, with the flags `npm start` gives the service. */
function startProcess(script: string, port: number, appName: string): Server {
  const child = spawn(process.execPath, [...startNodeFlags(), script], {
    // PGAPPNAME: node-postgres names the connections with it (the service's change listener keeps its own name).
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: dbUrl,
      ADMIN_TOKEN,
      NODE_ENV: 'production',
      PGAPPNAME: appName,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.on('exit', (code, signal) => {
    if (!stopping) console.error(`${script} exited early (${code ?? signal})`);
  });
  return { port, process: child, appName };
}
let stopping = false;

/** Peak resident memory of a process, sampled from /proc (VmHWM is the kernel's high-water mark). */
function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

async function json(method: string, url: string, body: unknown, auth: string): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const parsed = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: (n: number) => unknown;
}

async function load(
  admin: pg.Client,
  server: Server,
  key: string,
  scenario: Scenario,
  seconds: number,
  prefix: string,
): Promise<Run> {
  let n = 0;
  const cpuBefore = await cpuSnapshot(admin, dbName, server);
  const machineBefore = machineTicks();
  const startedAt = Date.now();
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: scenario.method,
        path: scenario.path,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(scenario.body
          ? {
              setupRequest: (req: any) => {
                req.body = JSON.stringify(scenario.body!(n++)).replaceAll('$P', prefix);
                return req;
              },
            }
          : {}),
      },
    ],
  });
  const machineAfter = machineTicks();
  const cpuAfter = await cpuSnapshot(admin, dbName, server);
  const cpu = cpuSpentMs(server, cpuBefore, cpuAfter);
  if (process.env.BENCH_DIAG)
    await reportBusyBackends(
      admin,
      server,
      `${scenario.name} ${server.appName}`,
      cpuBefore,
      cpuAfter,
      Date.now() - startedAt,
    );
  const answered = Math.max(1, result.requests.total);
  const busy = machineAfter.busy - machineBefore.busy;
  const all = busy + machineAfter.idle - machineBefore.idle + machineAfter.steal - machineBefore.steal;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    cpuNode: cpu.node / answered,
    cpuDb: cpu.db / answered,
    idle: (machineAfter.idle - machineBefore.idle) / Math.max(1, all),
    steal: (machineAfter.steal - machineBefore.steal) / Math.max(1, all),
    cpuOther: Math.max(0, busy * TICK_MS - cpu.node - cpu.db) / answered,
  };
}

const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(8);

async function measure(
  label: string,
  scenarios: Scenario[],
  key: string,
  includeRaw: boolean,
  admin: pg.Client,
  service: Server,
  raw: Server,
) {
  const results: Record<string, { service: Run[]; raw: Run[] }> = {};
  let round = 0;
  for (const scenario of scenarios) {
    results[scenario.name] = { service: [], raw: [] };
    // warm-up of both (JIT, pools, caches, the first autovacuum passes of young tables), not counted
    await load(admin, service, key, scenario, WARMUP, `w${round}s`);
    if (includeRaw) await load(admin, raw, key, scenario, WARMUP, `w${round}r`);
    for (let i = 0; i < 2; i++) {
      round++;
      results[scenario.name].service.push(await load(admin, service, key, scenario, DURATION, `${label}${round}s`));
      if (includeRaw)
        results[scenario.name].raw.push(await load(admin, raw, key, scenario, DURATION, `${label}${round}r`));
    }
  }
  const avg = (runs: Run[], k: keyof Run) => runs.reduce((s, r) => s + r[k], 0) / Math.max(1, runs.length);
  const sum = (runs: Run[], k: keyof Run) => runs.reduce((s, r) => s + r[k], 0);
  console.log(`\n${label}: ${CONNECTIONS} connections, ${DURATION} s per run, A B A B (service, raw)`);
  console.log(
    "cpu: ms of CPU time per request, the server's process + its PostgreSQL backends; cpu ratio: raw's total / the service's",
  );
  console.log(
    'endpoint                          service rps  p50 ms  p99 ms  errors    cpu node+db |  raw rps  p50 ms  p99 ms  errors    cpu node+db | ratio  cpu ratio',
  );
  const cpu = (runs: Run[]) => `${avg(runs, 'cpuNode').toFixed(3)}+${avg(runs, 'cpuDb').toFixed(3)}`.padStart(15);
  const cpuTotal = (runs: Run[]) => avg(runs, 'cpuNode') + avg(runs, 'cpuDb');
  const summary: Record<string, number> = {};
  for (const [name, r] of Object.entries(results)) {
    const s = avg(r.service, 'rps');
    const rawRps = avg(r.raw, 'rps');
    summary[name] = s;
    console.log(
      `${name.padEnd(32)} ${fmt(s)}   ${fmt(avg(r.service, 'p50'), 1)}${fmt(avg(r.service, 'p99'), 1)}${fmt(sum(r.service, 'errors'))}${cpu(r.service)} |` +
        (includeRaw
          ? `${fmt(rawRps)}${fmt(avg(r.raw, 'p50'), 1)}${fmt(avg(r.raw, 'p99'), 1)}${fmt(sum(r.raw, 'errors'))}${cpu(r.raw)} | ${(s / rawRps).toFixed(2)}x  ${(cpuTotal(r.raw) / cpuTotal(r.service)).toFixed(2)}x`
          : '       -       -       -       -               - |     -'),
    );
  }
  console.log(
    '\nthe machine during those runs: CPU time idle and stolen by the hypervisor (%), and CPU ms per request spent outside the server and its backends (load generator, PostgreSQL background processes, other work)',
  );
  console.log('endpoint                          service idle  steal   other |     raw idle  steal   other');
  const machine = (runs: Run[]) =>
    `${fmt(avg(runs, 'idle') * 100, 1)}${fmt(avg(runs, 'steal') * 100, 1)}${fmt(avg(runs, 'cpuOther'), 3)}`;
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `machine ${name.padEnd(32)} ${machine(r.service)} | ${includeRaw ? machine(r.raw) : '       -       -       -'}`,
    );
  }
  console.log(`service peak RSS: ${peakRssMb(service.process.pid!)} MB`);
  return summary;
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${dbName}"`);
  if (process.env.BENCH_DIAG) await admin.query(`alter database "${dbName}" set track_functions = 'pl'`);
  const service = startProcess(
    await bundle('server/src/main.ts', 'server/dist/main.mjs'),
    SERVICE_PORT,
    'bench-service',
  );
  const raw = startProcess(await bundle('bench/raw-server.ts', 'bench/dist/raw-server.mjs'), RAW_PORT, 'bench-raw');
  try {
    await waitFor(`http://127.0.0.1:${SERVICE_PORT}/api/me`, 60_000);
    await waitFor(`http://127.0.0.1:${RAW_PORT}/api/me`, 60_000);
    const base = `http://127.0.0.1:${SERVICE_PORT}`;
    const org = await json('POST', `${base}/admin/organizations`, { name: 'Bench' }, `Bearer ${ADMIN_TOKEN}`);
    const key: string = org.data.api_key;
    const auth = `Bearer ${key}`;
    const program = await json('POST', `${base}/api/programs`, { name: 'Bench', commission_value: 30 }, auth);
    await json(
      'POST',
      `${base}/api/affiliates`,
      { email: 'bench@example.com', program_id: program.data.program.id, slug: 'bench' },
      auth,
    );
    if (process.env.BENCH_ENDPOINT) {
      await json(
        'POST',
        `${base}/api/webhook-endpoints`,
        { url: 'http://127.0.0.1:9/bench-sink', events: [...OUTBOUND_EVENT_TYPES] },
        auth,
      );
    }
    const click = await json('POST', `${base}/api/clicks`, { ref: 'bench' }, auth);
    const cookie: string = click.data.click.cookie_id;
    const customers = 2000;
    for (let i = 0; i < customers; i++)
      await json('POST', `${base}/api/customers`, { customer_id: `sub_${i}`, cookie_id: cookie }, auth);

    const scenarios: Scenario[] = [
      {
        name: 'POST /api/clicks',
        method: 'POST',
        path: '/api/clicks',
        body: () => ({ ref: 'bench', landing_url: 'https://shop.example.com/?ref=bench' }),
      },
      {
        name: 'POST /api/customers',
        method: 'POST',
        path: '/api/customers',
        body: (n) => ({ customer_id: `$P_c${n}`, cookie_id: cookie }),
      },
      {
        name: 'POST /api/conversions',
        method: 'POST',
        path: '/api/conversions',
        body: (n) => ({ external_id: `$P_o${n}`, amount: 49.99, cookie_id: cookie }),
      },
      {
        name: 'POST /api/conversions recurring',
        method: 'POST',
        path: '/api/conversions',
        body: (n) => ({ external_id: `$P_r${n}`, amount: 19.99, customer_id: `sub_${n % customers}` }),
      },
      { name: 'GET /api/me', method: 'GET', path: '/api/me' },
    ];

    if (ONLY) scenarios.splice(0, scenarios.length, ...scenarios.filter((scenario) => scenario.name.includes(ONLY)));
    const empty = await measure('empty database', scenarios, key, true, admin, service, raw);

    if (SEEDED) {
      const db = new pg.Client({ connectionString: dbUrl });
      await db.connect();
      const started = Date.now();
      const { rows } = await db.query('select id, organization_id, program_id from affiliates limit 1');
      const a = rows[0];
      await db.query(
        `insert into clicks (id, organization_id, affiliate_id, program_id, cookie_id, occurred_at, created_at)
         select gen_random_uuid(), $1, $2, $3, 'ck_seed' || g, now() - (g % 90) * interval '1 day', now()
         from generate_series(1, 2000000) g`,
        [a.organization_id, a.id, a.program_id],
      );
      await db.query(
        `insert into conversions (id, organization_id, external_id, amount, currency, kind, commission_amount, affiliate_id, program_id, occurred_at, created_at)
         select gen_random_uuid(), $1, 'seed_' || g, 49.99, 'USD', 'initial', 15.00, $2, $3, now() - (g % 365) * interval '1 day', now()
         from generate_series(1, 200000) g`,
        [a.organization_id, a.id, a.program_id],
      );
      await db.query('vacuum analyze');
      // The bulk load's aftermath (writing its WAL out at the next checkpoint, autovacuum of the
      // new rows) would otherwise run during the measurement and slow every endpoint alike, even
      // GET /api/me, which reads nothing: settle it first, so that the figures show data volume.
      await db
        .query('checkpoint')
        .catch((err: Error) =>
          console.log(`(no CHECKPOINT: ${err.message}; the bulk load's WAL is written out during the measurement)`),
        );
      for (let waited = 0; waited < 120; waited++) {
        const busy = await db.query(
          "select count(*)::int as n from pg_stat_activity where backend_type = 'autovacuum worker'",
        );
        if (busy.rows[0].n === 0) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      const counts = await db.query(
        'select (select count(*) from clicks) as clicks, (select count(*) from conversions) as conversions',
      );
      console.log(
        `\nseeded ${counts.rows[0].clicks} clicks and ${counts.rows[0].conversions} conversions in ${((Date.now() - started) / 1000).toFixed(0)} s`,
      );
      await db.end();
      const seeded = await measure('seeded database', scenarios, key, true, admin, service, raw);
      console.log('\nseeded vs empty (service requests/s)');
      for (const name of Object.keys(empty)) {
        console.log(
          `${name.padEnd(32)} ${(((seeded[name] - empty[name]) / empty[name]) * 100).toFixed(1).padStart(6)} %`,
        );
      }
    }
  } finally {
    stopping = true;
    service.process.kill('SIGTERM');
    raw.process.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    await admin.query(`drop database if exists "${dbName}" with (force)`);
    await admin.end();
  }
}

await main();
