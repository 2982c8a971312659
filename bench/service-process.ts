/**
 * What every benchmark needs to run the service as `npm start` runs it and to read what it cost:
 * the node flags of the start script, a wait until a started server answers, a process's CPU time.
 */
import { readFileSync } from 'node:fs';

export const TICK_MS = 10; // /proc reports CPU time in clock ticks of 1/100 s (USER_HZ)

/** utime + stime of a process in clock ticks (fields 14 and 15 of /proc/<pid>/stat); 0 once it is gone. */
export function cpuTicks(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/**
 * The whole machine's CPU time so far, in clock ticks, from the first line of /proc/stat: busy
 * (user, nice, system, irq, softirq), idle (idle, iowait) and steal (taken by the hypervisor for
 * other guests: on a shared virtual machine, the neighbours' share).
 */
export function machineTicks(): { busy: number; idle: number; steal: number } {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal: steal ?? 0 };
}

/**
 * The node flags `npm start` (package.json) gives the service: --max-semi-space-size bounds the young generation, hence peak memory;
 * then BENCH_NODE_FLAGS, for a profile of the service under the bench's load (`BENCH_NODE_FLAGS='--cpu-prof --cpu-prof-dir=/tmp/prof'`).
 */
export function startNodeFlags(): string[] {
  const start: string = JSON.parse(readFileSync('package.json', 'utf8')).scripts.start;
  const command = /\bnode((?:\s+--\S+)*)\s+server\/dist\/main\.mjs/.exec(start);
  if (!command) throw new Error(`bench: cannot find "node … server/dist/main.mjs" in the start script: ${start}`);
  return [...command[1].trim().split(/\s+/), ...(process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/)].filter(Boolean);
}

/** Resolves once `url` answers at all; fails after `timeoutMs`. */
export async function waitFor(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`${url} did not come up`);
}
