import { sql, type RawBuilder } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';

/** Runs one statement and answers its rows (delivery's: Db.rows within its bound on pooled connections). */
export type Query = <R>(statement: RawBuilder<R>) => Promise<R[]>;

/**
 * Retention of the outbox and the delivery log: a pg-boss schedule (every hour, at minute 17)
 * queues one job, whichever instance's cron pass comes first (pg-boss sends one job per
 * occurrence, however many instances run it), and the worker that takes it deletes, in batches of
 * `batch` events, every event dispatched before the retention cut-off together with its finished
 * deliveries (succeeded or failed). An event with a delivery still pending (a retry due) stays,
 * with that delivery, until it finishes. Batches claim their events with SKIP LOCKED, so two runs
 * at once (a job run again after a crash) share the work instead of waiting on each other.
 */
export const RETENTION_QUEUE = 'webhook-retention';
export const RETENTION_CRON = '17 * * * *';

export const RETENTION_DEFAULTS = {
  batch: 1_000,
  /** One run stops after this long; the next run goes on where it stopped. */
  maxRunMs: 60_000,
} as const;

/**
 * The organizations with events dispatched before `cutoff`: the round goes organization by
 * organization (on Citus each batch is then one shard's, and SKIP LOCKED needs the organization).
 */
export const pruneOrganizations = (cutoff: Date) =>
  sql<{
    organization_id: string;
  }>`select distinct organization_id from outbound_events where dispatched_at < ${cutoff}`;

/** One batch of one organization: its oldest `batch` events dispatched before `cutoff`, their finished deliveries, and the events themselves unless a delivery is pending. */
export const prune = (cutoff: Date, batch: number, organizationId: string) => {
  const org = sql`${organizationId}::uuid`;
  return sql<{
    examined: number;
    deliveries: number;
    events: number;
  }>`with old as (
  select id, organization_id from outbound_events
  where organization_id = ${org} and dispatched_at < ${cutoff} order by dispatched_at limit ${batch} for update skip locked
), kept as (
  select distinct d.event_id from webhook_deliveries d join old on d.event_id = old.id and d.organization_id = ${org}
  where d.status = 'pending'
), deliveries as (
  delete from webhook_deliveries d using old where d.event_id = old.id and d.organization_id = ${org} and d.status <> 'pending'
  returning 1
), events as (
  delete from outbound_events o using old
  where o.id = old.id and o.organization_id = ${org} and not exists (select 1 from kept where kept.event_id = old.id)
  returning 1
)
select (select count(*) from old)::int as examined, (select count(*) from deliveries)::int as deliveries, (select count(*) from events)::int as events`;
};

export interface Pruned {
  events: number;
  deliveries: number;
}

/**
 * Deletes what was dispatched before `cutoff`, batch by batch (each its own statement and
 * transaction, so locks are short and a stop loses at most one batch), until a batch comes back
 * short or `maxRunMs` has passed.
 */
export async function pruneDelivered(
  query: Query,
  cutoff: Date,
  options: { batch?: number; maxRunMs?: number } = {},
): Promise<Pruned> {
  const batch = options.batch ?? RETENTION_DEFAULTS.batch;
  const until = Date.now() + (options.maxRunMs ?? RETENTION_DEFAULTS.maxRunMs);
  const total: Pruned = { events: 0, deliveries: 0 };
  for (const { organization_id: organization } of await query(pruneOrganizations(cutoff))) {
    for (;;) {
      const rows = await query(prune(cutoff, batch, organization));
      const { examined, deliveries, events } = rows[0];
      total.events += events;
      total.deliveries += deliveries;
      if (Date.now() > until) return total;
      // Short: nothing older is left (but events kept for a pending delivery). None deleted: only those are left.
      if (examined < batch || events + deliveries === 0) break;
    }
  }
  return total;
}

/** Schedules the retention job and works it (every delivering process does both; pg-boss sends one job per hour). A failed run is logged at error and told to `jobFailed` (job_failures_total), then retried by pg-boss. */
export async function startRetention(
  boss: PgBoss,
  query: Query,
  retentionDays: number,
  logger: Logger,
  jobFailed?: (queue: string, err: unknown) => void,
): Promise<void> {
  await boss.createQueue(RETENTION_QUEUE, {
    retryLimit: 3,
    retryDelay: 60,
    expireInSeconds: 15 * 60,
    deleteAfterSeconds: 7 * 24 * 60 * 60,
  });
  if (retentionDays <= 0) {
    await boss.unschedule(RETENTION_QUEUE);
    return;
  }
  await boss.schedule(RETENTION_QUEUE, RETENTION_CRON);
  await boss.work(RETENTION_QUEUE, { pollingIntervalSeconds: 60 }, async () => {
    const cutoff = new Date(Date.now() - retentionDays * 24 * 60 * 60 * 1000);
    try {
      const pruned = await pruneDelivered(query, cutoff);
      logger.info(
        { job: RETENTION_QUEUE, ...pruned, cutoff, retentionDays },
        'outbound events: deleted what was dispatched before the retention cut-off',
      );
    } catch (err) {
      const reason = (err as Error)?.message ?? String(err);
      logger.error({ err, job: RETENTION_QUEUE, reason }, `job ${RETENTION_QUEUE} failed: ${reason}`);
      jobFailed?.(RETENTION_QUEUE, err);
      throw err;
    }
  });
}
