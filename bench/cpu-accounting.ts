// What a server under test spends in CPU during a run (npm run bench, bench/run.ts): its own process
// and its PostgreSQL backends, read from /proc on this machine.
import type { ChildProcess } from 'node:child_process';
import type pg from 'pg';
import { TICK_MS, cpuTicks } from './service-process.js';

/** A server under test: its process, and the application_name its PostgreSQL connections carry. */
export interface Server {
  port: number;
  process: ChildProcess;
  appName: string;
}

/**
 * CPU ticks so far of the server's process and of each of its PostgreSQL backends (found by
 * application_name in `database`; PostgreSQL runs on this machine). On a machine shared with other work, CPU
 * time per request moves far less than requests per second.
 */
export async function cpuSnapshot(admin: pg.Client, database: string, server: Server): Promise<Map<number, number>> {
  const { rows } = await admin.query('select pid from pg_stat_activity where datname = $1 and application_name = $2', [
    database,
    server.appName,
  ]);
  const pids = [server.process.pid!, ...rows.map((r: { pid: number }) => r.pid)];
  return new Map(pids.map((pid) => [pid, cpuTicks(pid)]));
}

/** CPU ms spent between two snapshots by the server's process and by its backends (a backend that appeared in between counts from its start). */
export function cpuSpentMs(
  server: Server,
  before: Map<number, number>,
  after: Map<number, number>,
): { node: number; db: number } {
  let db = 0;
  for (const [pid, t] of after) if (pid !== server.process.pid) db += t - (before.get(pid) ?? 0);
  const node = (after.get(server.process.pid!) ?? 0) - (before.get(server.process.pid!) ?? 0);
  return { node: node * TICK_MS, db: db * TICK_MS };
}

/**
 * BENCH_DIAG: prints each backend of `server` that spent over half of one core between the two
 * snapshots (of a run lasting `wallMs`), with what pg_stat_activity says it is running.
 */
export async function reportBusyBackends(
  admin: pg.Client,
  server: Server,
  label: string,
  before: Map<number, number>,
  after: Map<number, number>,
  wallMs: number,
): Promise<void> {
  for (const [pid, ticks] of after) {
    const spentMs = (ticks - (before.get(pid) ?? 0)) * TICK_MS;
    if (pid === server.process.pid || spentMs <= wallMs / 2) continue;
    const { rows } = await admin.query(
      "select state, now() - query_start as running, left(regexp_replace(query, '\\s+', ' ', 'g'), 400) as query from pg_stat_activity where pid = $1",
      [pid],
    );
    console.log(`diag ${label}: backend ${pid} spent ${spentMs} ms of a ${wallMs} ms run: ${JSON.stringify(rows[0])}`);
  }
}
