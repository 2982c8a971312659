import type { MikroORM } from '@mikro-orm/postgresql';
import { isDatabaseUnavailable } from './sql.js';

/**
 * The reads that go to the read replicas (DATABASE_REPLICA_URLS), by the route that runs them: the
 * only list (docs/read-replicas.md and the README's "Read replicas" name the same routes). Each is
 * what a merchant reads to look, where a row written a moment ago may be missing for the replicas'
 * lag: the lists and the reports a dashboard loads on every page. Never a read a write depends on:
 * idempotent repeats, attribution, ownership checks, reads by id, refunds, payout runs and their
 * export, the partner portal, anything read right after a write in the same request; those stay on
 * the primary (kyselyOf, Db.of). A call site names its entry (readFromReplica in db/database.ts),
 * so a read leaves this list only by changing its call site too.
 */
export const REPLICA_READS = [
  'GET /api/programs',
  'GET /api/affiliates',
  'GET /api/conversions',
  'GET /api/commissions',
  'GET /api/payouts',
  'GET /api/coupons',
  'GET /api/integrations/events',
  'GET /api/reports/affiliates',
  'GET /api/reports/timeseries',
] as const;

export type ReplicaRead = (typeof REPLICA_READS)[number];

/** How often a replica that stopped answering is tried again (`select 1`), apart from any request. */
export const REPLICA_RETRY_MS = 2_000;

/** What the routing tells its owner: the service logs these (main.ts) and counts fallbacks (http/metrics.ts). */
export interface ReplicaEvents {
  /** A replica stopped answering: told once per outage, whatever the number of reads meanwhile. */
  onReplicaDown?(replica: string, err: unknown): void;
  /** It answers again: reads return to it. */
  onReplicaBack?(replica: string, downForMs: number): void;
}

/**
 * A replica is unusable, rather than the statement wrong: it is down, restarting, refusing
 * connections, frozen past the client-side timeout, or refusing our credentials. A statement the
 * replica ran and PostgreSQL cancelled for its duration is not one: the primary would take as long.
 */
export function isReplicaUnreachable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code.startsWith('28') || code === '3D000') return true;
  if (code === '57014' || /due to statement timeout/i.test(typeof e?.message === 'string' ? e.message : ''))
    return false;
  return isDatabaseUnavailable(err);
}

interface Replica {
  name: string;
  /** An ORM of its own on the replica (db/orm.ts, connectReplicas): same pool bounds, parsers and timeouts as the primary's. */
  orm: MikroORM;
  /** Set while it does not answer: reads skip it until the retry finds it back. */
  downSince?: number;
  retry?: NodeJS.Timeout;
}

/**
 * Sends the reads of REPLICA_READS to the replicas in turn, and to the primary while none answers:
 * a replica that fails with an unreachable error is set aside (told once), the read that met it
 * runs again on the primary, and a timer tries the replica every REPLICA_RETRY_MS until it answers,
 * so no request waits on a replica known to be down.
 */
export class ReplicaRouting {
  private readonly replicas: Replica[];
  private next = 0;
  private closed = false;
  /** Reads served by the primary although replicas are configured, by read (the metrics' counter). */
  readonly fallbackReads = new Map<ReplicaRead, number>();
  private readonly fallbackListeners: ((read: ReplicaRead) => void)[] = [];

  constructor(
    private readonly primary: MikroORM,
    replicas: readonly { name: string; orm: MikroORM }[],
    private readonly events: ReplicaEvents = {},
    private readonly probe: (orm: MikroORM) => Promise<unknown>,
    private readonly retryMs = REPLICA_RETRY_MS,
  ) {
    this.replicas = replicas.map((r) => ({ ...r }));
  }

  /** Each replica's name and whether reads go to it now. */
  status(): { name: string; up: boolean }[] {
    return this.replicas.map((r) => ({ name: r.name, up: r.downSince === undefined }));
  }

  /** The replicas' ORMs (closed with the primary's, db/orm.ts closeOrm). */
  orms(): MikroORM[] {
    return this.replicas.map((r) => r.orm);
  }

  /** Told of every read the primary serves in a replica's stead. */
  onFallback(listener: (read: ReplicaRead) => void): void {
    this.fallbackListeners.push(listener);
  }

  /** Runs `fn` on an answering replica's ORM, else on the primary's. */
  async read<T>(read: ReplicaRead, fn: (source: MikroORM) => Promise<T>): Promise<T> {
    const replica = this.pick();
    if (replica) {
      try {
        return await fn(replica.orm);
      } catch (err) {
        if (!isReplicaUnreachable(err)) throw err;
        this.setAside(replica, err);
      }
    }
    this.countFallback(read);
    return fn(this.primary);
  }

  /** Stops the retries (the ORMs are closed by their owner, db/orm.ts closeOrm). */
  close(): void {
    this.closed = true;
    for (const replica of this.replicas) clearTimeout(replica.retry);
  }

  private pick(): Replica | undefined {
    for (let i = 0; i < this.replicas.length; i++) {
      const replica = this.replicas[(this.next + i) % this.replicas.length];
      if (replica.downSince === undefined) {
        this.next = (this.next + i + 1) % this.replicas.length;
        return replica;
      }
    }
    return undefined;
  }

  private countFallback(read: ReplicaRead): void {
    if (this.replicas.length === 0) return;
    this.fallbackReads.set(read, (this.fallbackReads.get(read) ?? 0) + 1);
    for (const listener of this.fallbackListeners) listener(read);
  }

  private setAside(replica: Replica, err: unknown): void {
    // Reads that met the outage together: the first tells it and starts the retries.
    if (replica.downSince !== undefined) return;
    replica.downSince = Date.now();
    this.events.onReplicaDown?.(replica.name, err);
    this.scheduleRetry(replica);
  }

  private scheduleRetry(replica: Replica): void {
    replica.retry = setTimeout(() => {
      this.probe(replica.orm).then(
        () => {
          const downForMs = Date.now() - replica.downSince!;
          replica.downSince = undefined;
          replica.retry = undefined;
          this.events.onReplicaBack?.(replica.name, downForMs);
        },
        () => {
          if (!this.closed) this.scheduleRetry(replica);
        },
      );
    }, this.retryMs);
    replica.retry.unref();
  }
}
