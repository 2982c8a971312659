import { sql } from 'kysely';
import type pg from 'pg';
import { Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/sql.js';
import { QUEUE_SCHEMA } from '../jobs/queue.js';

/**
 * What the service does in the background, read from the database on each scrape of /metrics
 * (docs/operations.md lists each metric with the alert to set on it): the job queue (pg-boss, every
 * queue it holds, whoever added it), payouts stuck in `processing`, the report deltas not folded,
 * the outbound webhooks' backlog; and the pool, from the pool itself.
 *
 * The statements are organization-agnostic aggregates over partial or leading indexes
 * (payouts_processing_idx, webhook_deliveries_pending_idx, outbound_events_undispatched_idx,
 * outbound_event_batches_created_idx, pg-boss's job partitions by queue), each count capped at
 * COUNT_CAP rows, in one read-only transaction bounded by `set local statement_timeout` (no state
 * left on the connection: PgBouncer in transaction mode is fine). Scrapes within `cacheMs` of each
 * other share one reading. A reading that fails sets `database_metrics_up` to 0 and leaves the
 * gauges without values rather than failing the scrape.
 */
export const COUNT_CAP = 100_000;
const COLLECT_TIMEOUT_MS = 2_000;

const SERVICE_STATE = sql<ServiceState>`select
  (select count(*) from (select 1 from payouts where status = 'processing' limit ${sql.lit(COUNT_CAP)}) s)::int as payouts_processing,
  (select extract(epoch from now() - min(sent_at)) from payouts where status = 'processing')::float8 as payouts_processing_oldest_seconds,
  (select count(*) from (select 1 from report_deltas where due_at <= now() limit ${sql.lit(COUNT_CAP)}) s)::int as reports_unfolded,
  (select count(*) from (select 1 from webhook_deliveries where status = 'pending' limit ${sql.lit(COUNT_CAP)}) s)::int as deliveries_pending,
  (select extract(epoch from now() - min(created_at)) from webhook_deliveries where status = 'pending')::float8 as deliveries_oldest_seconds,
  (select count(*) from (select 1 from outbound_events where dispatched_at is null limit ${sql.lit(COUNT_CAP)}) s)::int
    + (select count(*) from (select 1 from outbound_event_batches limit ${sql.lit(COUNT_CAP)}) s)::int as outbox_pending,
  greatest(
    (select extract(epoch from now() - min(created_at)) from outbound_events where dispatched_at is null),
    (select extract(epoch from now() - min(created_at)) from outbound_event_batches)
  )::float8 as outbox_oldest_seconds,
  to_regclass(${sql.lit(`${QUEUE_SCHEMA}.job`)}) is not null as has_queue`;

/**
 * Per pg-boss queue: jobs by state (created: waiting, counting those due later; retry: failed and
 * waiting for their next attempt; active; failed: failed for good, kept until pg-boss's deletion),
 * and the age of the oldest job due to run and not taken (created or retry, start_after passed).
 */
const QUEUE_STATE = sql<QueueState>`select q.name,
  (select count(*) from (select 1 from ${sql.table(`${QUEUE_SCHEMA}.job`)} j where j.name = q.name and j.state = 'created' limit ${sql.lit(COUNT_CAP)}) s)::int as created,
  (select count(*) from (select 1 from ${sql.table(`${QUEUE_SCHEMA}.job`)} j where j.name = q.name and j.state = 'retry' limit ${sql.lit(COUNT_CAP)}) s)::int as retry,
  (select count(*) from (select 1 from ${sql.table(`${QUEUE_SCHEMA}.job`)} j where j.name = q.name and j.state = 'active' limit ${sql.lit(COUNT_CAP)}) s)::int as active,
  (select count(*) from (select 1 from ${sql.table(`${QUEUE_SCHEMA}.job`)} j where j.name = q.name and j.state = 'failed' limit ${sql.lit(COUNT_CAP)}) s)::int as failed,
  (select extract(epoch from now() - min(j.start_after)) from ${sql.table(`${QUEUE_SCHEMA}.job`)} j
    where j.name = q.name and j.state in ('created', 'retry') and j.start_after <= now())::float8 as oldest_pending_seconds
  from ${sql.table(`${QUEUE_SCHEMA}.queue`)} q order by q.name`;

interface ServiceState {
  payouts_processing: number;
  payouts_processing_oldest_seconds: number | null;
  reports_unfolded: number;
  deliveries_pending: number;
  deliveries_oldest_seconds: number | null;
  outbox_pending: number;
  outbox_oldest_seconds: number | null;
  has_queue: boolean;
}

interface QueueState {
  name: string;
  created: number;
  retry: number;
  active: number;
  failed: number;
  oldest_pending_seconds: number | null;
}

interface Reading {
  service: ServiceState;
  queues: QueueState[];
}

const JOB_STATES = ['created', 'retry', 'active', 'failed'] as const;

/** Registers the gauges on `registry`, read through `db` (and the pool's own counts from `pool`) on each scrape. */
export function watchOperations(registry: Registry, pool: pg.Pool, db: Db, options: { cacheMs?: number } = {}): void {
  const cacheMs = options.cacheMs ?? 1_000;
  let last: { at: number; reading: Promise<Reading | undefined> } | undefined;
  const reading = (): Promise<Reading | undefined> => {
    if (!last || Date.now() - last.at > cacheMs) last = { at: Date.now(), reading: read(db).catch(() => undefined) };
    return last.reading;
  };
  const registers = [registry];
  /** A gauge set from the reading on each scrape; no value when the reading failed or has none. */
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: L[],
    set: (g: Gauge<L>, r: Reading) => void,
  ) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers,
      async collect() {
        const r = await reading();
        this.reset();
        if (r) set(this, r);
      },
    });

  new Gauge({
    name: 'database_metrics_up',
    help: 'Whether the last reading of the database-backed metrics (job queue, payouts, reports, webhook backlog) succeeded (1) or failed (0).',
    registers,
    async collect() {
      this.set((await reading()) ? 1 : 0);
    },
  });
  gauge(
    'job_queue_jobs',
    `pg-boss jobs per queue and state: created (waiting, including those due later), retry (failed, waiting for their next attempt), active, failed (failed for good, kept until deleted). Counts are capped at ${COUNT_CAP}.`,
    ['queue', 'state'],
    (g, r) => {
      for (const q of r.queues) for (const state of JOB_STATES) g.set({ queue: q.name, state }, q[state]);
    },
  );
  gauge(
    'job_queue_oldest_pending_age_seconds',
    'Per pg-boss queue: how long the oldest job due to run (created or retry, its start time passed) has waited; 0 when none waits.',
    ['queue'],
    (g, r) => {
      for (const q of r.queues) g.set({ queue: q.name }, Math.max(0, q.oldest_pending_seconds ?? 0));
    },
  );
  gauge(
    'payouts_processing',
    `Payouts in status processing (sent to a provider, outcome not yet known), all organizations; capped at ${COUNT_CAP}.`,
    [],
    (g, r) => g.set(r.service.payouts_processing),
  );
  gauge(
    'payouts_processing_oldest_age_seconds',
    'How long ago the oldest payout still in processing was sent; 0 when none.',
    [],
    (g, r) => g.set(Math.max(0, r.service.payouts_processing_oldest_seconds ?? 0)),
  );
  gauge(
    'reports_unfolded_deltas',
    `Report deltas due and not yet folded into the summaries (report_deltas; the reports read them live, exact either way), capped at ${COUNT_CAP}. A few hundred while the folder keeps up (it runs every 10 s); growing means it is stuck.`,
    [],
    (g, r) => g.set(r.service.reports_unfolded),
  );
  gauge(
    'outbound_webhook_backlog',
    `Outbound webhooks not yet delivered, by stage: outbox (events not yet turned into deliveries) and delivery (deliveries pending: first attempt or a retry due); each capped at ${COUNT_CAP}.`,
    ['stage'],
    (g, r) => {
      g.set({ stage: 'outbox' }, r.service.outbox_pending);
      g.set({ stage: 'delivery' }, r.service.deliveries_pending);
    },
  );
  gauge(
    'outbound_webhook_backlog_oldest_age_seconds',
    'Age of the oldest outbound webhook not yet delivered, by stage (outbox, delivery); 0 when none.',
    ['stage'],
    (g, r) => {
      g.set({ stage: 'outbox' }, Math.max(0, r.service.outbox_oldest_seconds ?? 0));
      g.set({ stage: 'delivery' }, Math.max(0, r.service.deliveries_oldest_seconds ?? 0));
    },
  );
  new Gauge({
    name: 'database_pool_connections',
    help: 'The database pool of this process: connections by state (total open, idle, waiting: requests waiting for a connection), and max (the bound, DB_POOL_MAX).',
    labelNames: ['state'],
    registers,
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
      this.set({ state: 'max' }, pool.options.max ?? 10);
    },
  });
}

/** One reading, in one read-only transaction whose statements PostgreSQL cancels past COLLECT_TIMEOUT_MS. */
function read(db: Db): Promise<Reading> {
  return db.transaction(async (trx) => {
    await trx.rows(sql`set transaction read only`);
    await trx.rows(sql`set local statement_timeout = ${sql.lit(COLLECT_TIMEOUT_MS)}`);
    const [service] = await trx.rows(SERVICE_STATE);
    const queues = service.has_queue ? await trx.rows(QUEUE_STATE) : [];
    return { service, queues };
  });
}
