/**
 * npm run bench:events: outbound events under the conversion benchmark's load. The service (the
 * `npm start` bundle, delivering in process) on a fresh PostgreSQL database, a local receiver in a
 * process of its own (bench/events-receiver.ts) that verifies every delivery with
 * `standardwebhooks`, and conversions posted by autocannon, alternated A B A B: A by an
 * organization without endpoints, B by one with an endpoint subscribed to every event (each
 * conversion then writes conversion.created and commission.created with it).
 *
 * Prints conversions/s and latency for A and B (the cost of delivery to the API), the
 * deliveries/s the receiver got while B's load ran, and the time from commit to receipt of every
 * measured conversion.created (p50, p99: receipt time minus the conversion's `created_at`, the
 * statement's time, so slightly more than from the commit), with the load average of the machine.
 *
 * Environment: DATABASE_URL (a PostgreSQL the bench may create a database on; default the local
 * one), BENCH_DURATION seconds per run (default 10), BENCH_CONNECTIONS (default 32). Its own ports
 * (4201 service, 4202 receiver), only on 127.0.0.1; every run is bounded in time, and so is the wait
 * for the last deliveries (60 s).
 */
import { fork, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { TICK_MS, cpuTicks, startNodeFlags, waitFor } from './service-process.js';
import pg from 'pg';
import { bundle } from '../server/bundle.js';
import { OUTBOUND_EVENT_TYPES } from '../contract/src/index.js';
import { EVENTS_WRITTEN } from '../server/src/modules/events/outbox.js';

const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SERVICE_PORT = 4201;
const RECEIVER_PORT = 4202;
const ADMIN_TOKEN = 'bench-events-admin-token-0123456789';
const ENCRYPTION_KEY_FOR_RUN = randomBytes(32).toString('hex');
const dbName = `aa_bench_events_${randomBytes(3).toString('hex')}`;
const dbUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${dbName}`;
  return u.toString();
})();

interface Receipt {
  at: number;
  latencyMs?: number;
}

/**
 * BENCH_EVENTS_DELIVERY: `in-process` (default); `off`: the service writes the outbox but does not
 * deliver (the hot path's cost alone); `worker`: the service does not deliver, a separate
 * `npm run worker` process (the same bundle's entry, its own pool) does.
 */
const DELIVERY = (['off', 'worker'] as const).find((d) => d === process.env.BENCH_EVENTS_DELIVERY) ?? 'in-process';
const receiver = fork(new URL('./events-receiver.ts', import.meta.url), {
  execArgv: ['--import', 'tsx'],
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
});
/** One request to the receiver process, answered by the first message carrying `key`. */
function ask<T>(message: object, key: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (answer: Record<string, unknown>) => {
      if (!(key in answer)) return;
      receiver.off('message', onMessage);
      resolve(answer[key] as T);
    };
    receiver.on('message', onMessage);
    receiver.send(message);
  });
}
/**
 * CPU seconds (user + system, from /proc) used so far by the service, the worker, the receiver and
 * the PostgreSQL backends serving the bench's database: where each conversion and delivery's
 * cost lands. Zero where /proc is not there (not Linux).
 */
function cpuSeconds(pids: Record<string, number | undefined>): Record<string, number> {
  const of = (pid: number): number => (cpuTicks(pid) * TICK_MS) / 1000;
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) out[name] = pid === undefined ? 0 : of(pid);
  let postgres = 0;
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(` ${dbName} `)) postgres += of(Number(entry));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  out.postgres = postgres;
  return out;
}
const cpuDelta = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)]));

const report = () => ask<{ receipts: Receipt[]; distinct: number; rejected: number }>({ report: true }, 'report');

async function json(method: string, path: string, body: unknown, auth: string): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${SERVICE_PORT}${path}`, {
    method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const parsed = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

async function merchant(name: string): Promise<{ key: string; slug: string }> {
  const org = await json('POST', '/admin/organizations', { name }, `Bearer ${ADMIN_TOKEN}`);
  const key = `Bearer ${org.data.api_key}`;
  const program = await json('POST', '/api/programs', { name: 'Main', commission_value: 30 }, key);
  const slug = `bench-${randomBytes(4).toString('hex')}`;
  await json(
    'POST',
    '/api/affiliates',
    { email: `${slug}@example.com`, program_id: program.data.program.id, slug },
    key,
  );
  return { key: org.data.api_key, slug };
}

async function conversions(key: string, slug: string, seconds: number, prefix: string) {
  let n = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${SERVICE_PORT}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/api/conversions',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        setupRequest: (req: any) => {
          req.body = JSON.stringify({ external_id: `${prefix}-${n++}`, amount: 49.99, ref: slug });
          return req;
        },
      },
    ],
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${dbName}"`);
  // In the repository, so that its npm packages resolve from node_modules (the bundle leaves them external).
  const script = await bundle('server/src/main.ts', 'server/dist/bench-events-main.mjs');
  const workerScript =
    DELIVERY === 'worker'
      ? await bundle('server/src/jobs/worker.ts', 'server/dist/bench-events-worker.mjs')
      : undefined;
  const service = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
      ...startNodeFlags(),
      script,
    ],
    {
      env: {
        ...process.env,
        PORT: String(SERVICE_PORT),
        HOST: '127.0.0.1',
        DATABASE_URL: dbUrl,
        ADMIN_TOKEN,
        LOG_LEVEL: 'warn',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_DELIVERY: DELIVERY === 'in-process' ? 'in-process' : 'off',
        ENCRYPTION_KEY: ENCRYPTION_KEY_FOR_RUN,
        NODE_ENV: 'production',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  let worker: ReturnType<typeof spawn> | undefined;
  try {
    await waitFor(`http://127.0.0.1:${SERVICE_PORT}/health`, 60_000);
    if (workerScript) {
      worker = spawn(process.execPath, [workerScript], {
        env: {
          ...process.env,
          DATABASE_URL: dbUrl,
          LOG_LEVEL: 'warn',
          WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
          ENCRYPTION_KEY: ENCRYPTION_KEY_FOR_RUN,
          NODE_ENV: 'production',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    }
    const quiet = await merchant('Without endpoints');
    const subscribed = await merchant('With an endpoint');
    const endpoint = await json(
      'POST',
      '/api/webhook-endpoints',
      { url: `http://127.0.0.1:${RECEIVER_PORT}/hooks`, events: [...OUTBOUND_EVENT_TYPES] },
      `Bearer ${subscribed.key}`,
    );
    await ask({ start: { secret: endpoint.data.secret, port: RECEIVER_PORT } }, 'listening');

    // Warm-up (JIT, pools, the stored statements of both shapes), not counted.
    await conversions(quiet.key, quiet.slug, 3, 'warm-a');
    await conversions(subscribed.key, subscribed.slug, 3, 'warm-b');
    const received = async () => (await report()).receipts.length;
    const settle = async () => {
      const until = Date.now() + 60_000;
      let last = -1;
      while (Date.now() < until) {
        await new Promise((r) => setTimeout(r, 500));
        const now = await received();
        if (now === last) return;
        last = now;
      }
    };
    await settle();
    await ask({ reset: true }, 'reset');
    const measuredFrom = Date.now();
    const loadBefore = loadavg()[0];

    const runs: Record<'A' | 'B', Awaited<ReturnType<typeof conversions>>[]> = { A: [], B: [] };
    const loads: { from: number; to: number }[] = [];
    const pids = { service: service.pid, worker: worker?.pid, receiver: receiver.pid, autocannon: process.pid };
    const cpu: Record<'A' | 'B', Record<string, number>[]> = { A: [], B: [] };
    for (let round = 1; round <= 2; round++) {
      let before = cpuSeconds(pids);
      runs.A.push(await conversions(quiet.key, quiet.slug, DURATION, `a${round}`));
      cpu.A.push(cpuDelta(before, cpuSeconds(pids)));
      const from = Date.now();
      before = cpuSeconds(pids);
      runs.B.push(await conversions(subscribed.key, subscribed.slug, DURATION, `b${round}`));
      cpu.B.push(cpuDelta(before, cpuSeconds(pids)));
      loads.push({ from, to: Date.now() });
    }
    const cpuShare = (side: 'A' | 'B') => {
      const sum: Record<string, number> = {};
      for (const c of cpu[side])
        for (const [k, v] of Object.entries(c)) sum[k] = (sum[k] ?? 0) + v / (cpu[side].length * DURATION);
      return Object.entries(sum)
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${k} ${(100 * v).toFixed(0)} %`)
        .join(', ');
    };
    const loadAfter = loadavg()[0];
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    const outbox = await db.query<{ n: number }>(
      `select count(*)::int as n from ${EVENTS_WRITTEN} w where created_at > $1`,
      [new Date(measuredFrom)],
    );
    let writtenDuringLoad = 0;
    for (const l of loads) {
      const { rows } = await db.query<{ n: number }>(
        `select count(*)::int as n from ${EVENTS_WRITTEN} w where created_at >= $1 and created_at < $2`,
        [new Date(l.from), new Date(l.to)],
      );
      writtenDuringLoad += rows[0].n;
    }
    await db.end();
    const expected = outbox.rows[0].n;
    const drainUntil = Date.now() + (DELIVERY === 'off' ? 0 : 60_000);
    while ((await received()) < expected && Date.now() < drainUntil) await new Promise((r) => setTimeout(r, 200));
    const { receipts, distinct, rejected } = await report();

    const avg = (rs: { rps: number }[]) => rs.reduce((s, r) => s + r.rps, 0) / rs.length;
    const a = avg(runs.A);
    const b = avg(runs.B);
    const during = (at: number) => loads.some((l) => at >= l.from && at < l.to);
    const loadSeconds = loads.reduce((s, l) => s + (l.to - l.from) / 1000, 0);
    const latencies = receipts.flatMap((r) => (r.latencyMs === undefined ? [] : [r.latencyMs])).sort((x, y) => x - y);
    console.log(
      `\nconversions, ${CONNECTIONS} connections, ${DURATION} s per run, A B A B; load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after (${cpus().length} cores)`,
    );
    console.log(
      `A without endpoints:          ${a.toFixed(0)} conversions/s, p50 ${runs.A[0].p50} ms, p99 ${runs.A[0].p99} ms, errors ${runs.A.reduce((s, r) => s + r.errors, 0)}`,
    );
    console.log(
      `B one endpoint, every event:  ${b.toFixed(0)} conversions/s, p50 ${runs.B[0].p50} ms, p99 ${runs.B[0].p99} ms, errors ${runs.B.reduce((s, r) => s + r.errors, 0)}  (B/A ${(b / a).toFixed(3)})`,
    );
    console.log(`delivery: ${DELIVERY}; CPU (100 % = one core) during A: ${cpuShare('A')}; during B: ${cpuShare('B')}`);
    if (DELIVERY === 'off') return;
    console.log(
      `\ndeliveries: ${receipts.length} of the ${expected} outbox rows written, ${distinct} distinct webhook-ids (${rejected} failed verification)`,
    );
    console.log(
      `  during B's load: ${(receipts.filter((r) => during(r.at)).length / loadSeconds).toFixed(0)} deliveries/s (outbox rows written meanwhile: ${(writtenDuringLoad / loadSeconds).toFixed(0)}/s)`,
    );
    // The CPU of the process(es) that deliver, per delivery made during B, beyond what B's conversions cost at A's rate.
    const seconds = (side: 'A' | 'B', names: string[]) =>
      cpu[side].reduce((sum, c) => sum + names.reduce((s2, n) => s2 + (c[n] ?? 0), 0), 0);
    const deliveredDuringLoad = receipts.filter((r) => during(r.at)).length;
    const conversionsA = runs.A.reduce((sum, r) => sum + r.rps * DURATION, 0);
    const conversionsB = runs.B.reduce((sum, r) => sum + r.rps * DURATION, 0);
    const perDelivery = (names: string[]) =>
      ((seconds('B', names) - (seconds('A', names) / conversionsA) * conversionsB) * 1000) / deliveredDuringLoad;
    // The worker does nothing but deliver (during A too, what B left), so all its CPU during B is delivery's.
    const deliveringProcess =
      DELIVERY === 'worker'
        ? `${((seconds('B', ['worker']) * 1000) / deliveredDuringLoad).toFixed(3)} ms in the worker`
        : `${perDelivery(['service']).toFixed(3)} ms in the service`;
    console.log(
      `  CPU per delivery during B: ${deliveringProcess}, ${perDelivery(['postgres']).toFixed(3)} ms in PostgreSQL, ` +
        `${perDelivery(['receiver']).toFixed(3)} ms in the receiver; a conversion during A: ${((seconds('A', ['service']) * 1000) / conversionsA).toFixed(3)} ms in the service, ` +
        `${((seconds('A', ['postgres']) * 1000) / conversionsA).toFixed(3)} ms in PostgreSQL`,
    );
    console.log(
      `  commit -> receipt (every measured conversion.created): p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms`,
    );
  } finally {
    if (worker) {
      worker.kill('SIGTERM');
      await new Promise((r) => worker!.once('exit', r));
    }
    service.kill('SIGTERM');
    await new Promise((r) => service.once('exit', r));
    receiver.disconnect();
    await admin.query(`drop database if exists "${dbName}" with (force)`);
    await admin.end();
  }
}

await main();
process.exit(0);
