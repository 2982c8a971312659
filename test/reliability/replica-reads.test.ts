import { readFileSync } from 'node:fs';
import type { MikroORM } from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import { isReplicaUnreachable, REPLICA_READS, ReplicaRouting } from '../../server/src/db/replica-reads.js';

/**
 * The routing of REPLICA_READS (server/src/db/replica-reads.ts) on stand-in ORMs: which errors set
 * a replica aside, that the read then runs on the primary, that an outage is told once, and that
 * reads return once the retry finds the replica. read-replica.test.ts does the same against a
 * real streaming replica behind a proxy it cuts.
 */
const orm = (name: string) => ({ name }) as unknown as MikroORM;
const primary = orm('primary');
const [first, second] = [orm('replica-1'), orm('replica-2')];
const nameOf = (source: MikroORM) => (source as unknown as { name: string }).name;
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' });

function routing(replicas: MikroORM[], options: { probe?: (o: MikroORM) => Promise<unknown>; retryMs?: number } = {}) {
  const events: string[] = [];
  const router = new ReplicaRouting(
    primary,
    replicas.map((o) => ({ name: nameOf(o), orm: o })),
    {
      onReplicaDown: (replica) => events.push(`down ${replica}`),
      onReplicaBack: (replica) => events.push(`back ${replica}`),
    },
    options.probe ?? (() => Promise.reject(refused)),
    options.retryMs ?? 60_000,
  );
  return { router, events };
}

describe('read replicas: the routing of REPLICA_READS', () => {
  it('takes the replicas in turn while they answer', async () => {
    const { router } = routing([first, second]);
    const served = [];
    for (let i = 0; i < 4; i++) served.push(await router.read('GET /api/programs', async (s) => nameOf(s)));
    expect(served).toEqual(['replica-1', 'replica-2', 'replica-1', 'replica-2']);
    router.close();
  });

  it('an unreachable replica: the read runs on the primary, the outage is told once, later reads skip it and are counted', async () => {
    const { router, events } = routing([first]);
    let replicaTries = 0;
    const read = (s: MikroORM) => {
      if (s === first) {
        replicaTries++;
        return Promise.reject(refused);
      }
      return Promise.resolve(nameOf(s));
    };
    expect(
      await Promise.all([
        router.read('GET /api/conversions', read),
        router.read('GET /api/conversions', read),
        router.read('GET /api/reports/timeseries', read),
      ]),
    ).toEqual(['primary', 'primary', 'primary']);
    expect(await router.read('GET /api/conversions', read)).toBe('primary');
    expect(events).toEqual(['down replica-1']);
    // The three reads in flight met the outage; the fourth did not try the replica.
    expect(replicaTries).toBe(3);
    expect(Object.fromEntries(router.fallbackReads)).toEqual({
      'GET /api/conversions': 3,
      'GET /api/reports/timeseries': 1,
    });
    expect(router.status()).toEqual([{ name: 'replica-1', up: false }]);
    router.close();
  });

  it("an error of the statement itself (or its statement_timeout) is the read's: no fallback, the replica stays in use", async () => {
    const { router, events } = routing([first]);
    const missingTable = Object.assign(new Error('relation "x" does not exist'), { code: '42P01' });
    const cancelled = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    await expect(router.read('GET /api/coupons', () => Promise.reject(missingTable))).rejects.toBe(missingTable);
    await expect(router.read('GET /api/coupons', () => Promise.reject(cancelled))).rejects.toBe(cancelled);
    expect(events).toEqual([]);
    expect(await router.read('GET /api/coupons', async (s) => nameOf(s))).toBe('replica-1');
    router.close();
  });

  it('the retry finds the replica back: told once, and reads return to it', async () => {
    let answers = false;
    const { router, events } = routing([first], {
      retryMs: 10,
      probe: () => (answers ? Promise.resolve() : Promise.reject(refused)),
    });
    expect(
      await router.read('GET /api/payouts', (s) =>
        s === first ? Promise.reject(refused) : Promise.resolve(nameOf(s)),
      ),
    ).toBe('primary');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(router.status()[0].up).toBe(false);
    answers = true;
    await expect.poll(() => router.status()[0].up, { timeout: 1_000 }).toBe(true);
    expect(events).toEqual(['down replica-1', 'back replica-1']);
    expect(await router.read('GET /api/payouts', async (s) => nameOf(s))).toBe('replica-1');
    router.close();
  });

  it('which errors set a replica aside', () => {
    for (const err of [
      refused,
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Query read timeout'),
      Object.assign(new Error('password authentication failed for user "app"'), { code: '28P01' }),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      Object.assign(new Error('database "x" does not exist'), { code: '3D000' }),
    ]) {
      expect(isReplicaUnreachable(err), err.message).toBe(true);
    }
    for (const err of [
      Object.assign(new Error('syntax error'), { code: '42601' }),
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
    ]) {
      expect(isReplicaUnreachable(err), err.message).toBe(false);
    }
  });

  it('docs-agree: docs/read-replicas.md lists exactly the routes of REPLICA_READS', () => {
    const docs = readFileSync(new URL('../../docs/read-replicas.md', import.meta.url), 'utf8');
    const table = docs.slice(
      docs.indexOf('## What reads from a replica'),
      docs.indexOf('## What stays on the primary'),
    );
    const routes = [...table.matchAll(/^\| `(GET [^`]+)` \|/gm)].map((m) => m[1]);
    expect(routes).toEqual([...REPLICA_READS]);
  });
});
