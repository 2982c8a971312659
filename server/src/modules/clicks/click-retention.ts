import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { sql, type RawBuilder } from 'kysely';
import type { Query } from '../events/retention.js';

/**
 * The organizations' click retention (organizations.click_retention_days, PUT /api/data-retention):
 * a pg-boss schedule queues one job a day, whichever instance's cron pass comes first, and the
 * worker that takes it goes through the clicks past their organization's cut-off in batches:
 *
 * - A click nothing refers to is deleted (clicks hold IP addresses and user agents, personal data).
 * - A click a customer or conversion refers to stays (the foreign keys keep it: the ledger's
 *   attribution), with only what the ledger needs: its `ip` and `user_agent` are cleared.
 * - Suppressed clicks (a click flood's surplus, referred to by nothing) are deleted.
 *
 * The cut-off is the retention or the organization's longest click window, whichever is longer:
 * a click a visitor may still convert on is never deleted.
 *
 * How a batch finds its clicks at scale (docs/data-lifecycle.md, "Retention at scale"): each
 * organization's clicks are walked in the order of `clicks_retention_idx` (organization_id,
 * created_at, id), from a cursor the previous batch returned, `batch` index entries at a time.
 * The walk's condition is the index's own key compared as a row with the cursor, ordered by that
 * key: with or without statistics (CI's PostgreSQL never analyzes), the planner reads the next
 * `batch` entries of the index and stops, never every due click and a sort of them. The cut-off
 * and the organization are checked on those rows, outside the walk, so that no estimate of how
 * many rows they keep can turn the walk into a bitmap scan and a sort. Each row is then locked
 * through its primary key (SKIP LOCKED: a row a concurrent write holds is left for the next run),
 * so each batch is one short statement, its own transaction, locking old rows only; inserts of new
 * clicks never wait for it.
 */
export const CLICK_RETENTION_QUEUE = 'click-retention';
export const CLICK_RETENTION_CRON = '27 3 * * *';

export const CLICK_RETENTION_DEFAULTS = {
  batch: 2_000,
  /** One run stops after this long; the next run goes on where it stopped. */
  maxRunMs: 10 * 60_000,
} as const;

/** Each organization with a retention, and its cut-off as of `now`. */
export const dueOrganizations = (now: Date) => sql<{
  organization_id: string;
  cutoff: Date;
}>`select o.id as organization_id,
    ${now}::timestamptz - greatest(o.click_retention_days, coalesce(p.window_days, 0)) * interval '1 day' as cutoff
  from organizations o
  left join (select organization_id, max(click_window_days) as window_days from programs group by organization_id) p on p.organization_id = o.id
  where o.click_retention_days is not null order by o.id`;

/** Where a batch starts and what it keeps: the organization, the cursor, the batch's size and the cut-off. */
export interface Walk {
  organization: string;
  createdAt: Date | string;
  id: string;
  batch: number;
  cutoff: Date;
}

/**
 * The next `batch` index entries of the organization in `table` after the cursor (created_at,
 * id), in index order; `due` keeps those created before the cut-off. The subquery's LIMIT keeps
 * the outer conditions out of the walk's estimate (see above). Every table the statement reads is
 * named with the organization, so that on Citus the whole batch runs on that organization's shard
 * (one router statement).
 */
const walk = (table: 'clicks' | 'suppressed_clicks', w: Walk) => sql`walked as (
  select w.id, w.organization_id, w.created_at from ${sql.table(table)} w
  where w.organization_id = ${w.organization}::uuid and (w.created_at, w.id) > (${w.createdAt}::timestamptz, ${w.id}::uuid)
  order by w.organization_id, w.created_at, w.id
  limit ${w.batch}
), due as (
  select id, organization_id from walked where created_at < ${w.cutoff}::timestamptz
), last as (
  select organization_id, created_at, id from walked order by organization_id desc, created_at desc, id desc limit 1
)`;

const referenced = (w: Walk) =>
  sql`exists (select 1 from conversions v where v.click_id = d.id and v.organization_id = ${w.organization}::uuid)
    or exists (select 1 from customers c where c.click_id = d.id and c.organization_id = ${w.organization}::uuid)`;

const SUMMARY = sql.raw(`(select count(*) from walked)::int as walked, (select count(*) from due)::int as due,
  (select organization_id from last) as last_organization_id, (select created_at from last) as last_created_at, (select id from last) as last_id`);

/**
 * One batch of clicks: those past the cut-off that nothing refers to are deleted; those a customer
 * or conversion refers to have their IP and user agent cleared (if not yet). Each row is locked by
 * its primary key (a lateral lookup: one index probe per row, whatever the estimates).
 */
export const pruneClicksBatch = (
  w: Walk,
): RawBuilder<BatchRow> => sql<BatchRow>`with ${walk('clicks', w)}, examined as (
  select d.id, d.organization_id, ${referenced(w)} as referenced from due d
), claimed as (
  select k.id, k.organization_id, e.referenced from examined e
  cross join lateral (
    select k.id, k.organization_id from clicks k
    where k.id = e.id and k.organization_id = ${w.organization}::uuid and (not e.referenced or k.ip is not null or k.user_agent is not null)
    for update skip locked
  ) k
), deleted as (
  delete from clicks k using claimed c where k.id = c.id and k.organization_id = ${w.organization}::uuid and not c.referenced returning 1
), cleared as (
  update clicks k set ip = null, user_agent = null from claimed c where k.id = c.id and k.organization_id = ${w.organization}::uuid and c.referenced returning 1
)
select ${SUMMARY}, (select count(*) from deleted)::int as deleted, (select count(*) from cleared)::int as cleared`;

/** One batch of suppressed clicks past the cut-off (nothing refers to them): deleted. */
export const pruneSuppressedClicksBatch = (
  w: Walk,
): RawBuilder<BatchRow> => sql<BatchRow>`with ${walk('suppressed_clicks', w)}, claimed as (
  select s.id, s.organization_id from due d
  cross join lateral (select s.id, s.organization_id from suppressed_clicks s where s.id = d.id and s.organization_id = ${w.organization}::uuid for update skip locked) s
), deleted as (
  delete from suppressed_clicks s using claimed c where s.id = c.id and s.organization_id = ${w.organization}::uuid returning 1
)
select ${SUMMARY}, (select count(*) from deleted)::int as deleted, 0 as cleared`;

export interface PrunedClicks {
  /** Clicks deleted. */
  deleted: number;
  /** Clicks kept for the ledger, their IP and user agent cleared. */
  cleared: number;
  suppressedDeleted: number;
  /** False when the run stopped at `maxRunMs` with clicks left (the next run goes on). */
  finished: boolean;
}

interface BatchRow {
  walked: number;
  due: number;
  last_organization_id: string | null;
  last_created_at: Date | null;
  last_id: string | null;
  deleted: number;
  cleared: number;
}

/** The cursor before every entry of an organization. */
const START = { createdAt: '-infinity', id: '00000000-0000-0000-0000-000000000000' };
/** A foreign key's refusal: a customer or conversion committed, referring to the click, after the batch's snapshot. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Applies every organization's click retention as of `now`, organization by organization, batch by
 * batch, until nothing is left or `maxRunMs` has passed.
 */
export async function pruneClicks(
  query: Query,
  now: Date,
  options: { batch?: number; maxRunMs?: number } = {},
): Promise<PrunedClicks> {
  const batch = options.batch ?? CLICK_RETENTION_DEFAULTS.batch;
  const until = Date.now() + (options.maxRunMs ?? CLICK_RETENTION_DEFAULTS.maxRunMs);
  const total: PrunedClicks = { deleted: 0, cleared: 0, suppressedDeleted: 0, finished: true };
  const organizations = await query(dueOrganizations(now));
  for (const statement of [pruneClicksBatch, pruneSuppressedClicksBatch]) {
    for (const { organization_id: organization, cutoff } of organizations) {
      let cursor: { createdAt: Date | string; id: string } = START;
      for (;;) {
        if (Date.now() > until) return { ...total, finished: false };
        const row = await pruneBatch(query, statement({ organization, ...cursor, batch, cutoff }));
        if (statement === pruneClicksBatch) {
          total.deleted += row.deleted;
          total.cleared += row.cleared;
        } else total.suppressedDeleted += row.deleted;
        // Done with the organization: the walk ran out of its entries, or passed the cut-off.
        if (row.walked < batch || row.due < row.walked) break;
        cursor = { createdAt: row.last_created_at!, id: row.last_id! };
      }
    }
  }
  return total;
}

/** One batch; run again when a customer or conversion referring to one of its clicks committed meanwhile (the next snapshot sees it). */
async function pruneBatch(query: Query, statement: RawBuilder<BatchRow>): Promise<BatchRow> {
  for (let attempt = 1; ; attempt++) {
    try {
      const rows = await query(statement);
      return rows[0];
    } catch (err) {
      if ((err as { code?: unknown }).code !== FOREIGN_KEY_VIOLATION || attempt >= 3) throw err;
    }
  }
}

/** What a run reports when it fails, besides the log: the job metrics (http/metrics.ts). */
export type JobFailed = (queue: string, err: unknown) => void;

/** Schedules the click retention job and works it (every process that runs the job queue's schedules). */
export async function startClickRetention(
  boss: PgBoss,
  query: Query,
  logger: Logger,
  jobFailed?: JobFailed,
): Promise<void> {
  await boss.createQueue(CLICK_RETENTION_QUEUE, {
    retryLimit: 3,
    retryDelay: 300,
    expireInSeconds: 30 * 60,
    deleteAfterSeconds: 7 * 24 * 60 * 60,
  });
  await boss.schedule(CLICK_RETENTION_QUEUE, CLICK_RETENTION_CRON);
  await boss.work(CLICK_RETENTION_QUEUE, { pollingIntervalSeconds: 60 }, () =>
    runClickRetention(query, logger, jobFailed),
  );
}

/**
 * One run of the job: logged, and on failure logged as an error with the job's name and the
 * reason and counted (jobFailed), then thrown again so that pg-boss retries it.
 */
export async function runClickRetention(
  query: Query,
  logger: Logger,
  jobFailed?: JobFailed,
  options?: { batch?: number; maxRunMs?: number },
): Promise<PrunedClicks> {
  const started = Date.now();
  try {
    const pruned = await pruneClicks(query, new Date(), options);
    const seconds = (Date.now() - started) / 1000;
    if (pruned.finished)
      logger.info(
        { job: CLICK_RETENTION_QUEUE, ...pruned, seconds },
        'clicks: applied the organizations’ click retention',
      );
    else
      logger.warn(
        { job: CLICK_RETENTION_QUEUE, ...pruned, seconds },
        'clicks: the click retention stopped at its time limit with clicks left; the next run goes on',
      );
    return pruned;
  } catch (err) {
    logger.error(
      {
        err,
        job: CLICK_RETENTION_QUEUE,
        reason: (err as Error)?.message ?? String(err),
        seconds: (Date.now() - started) / 1000,
      },
      `job ${CLICK_RETENTION_QUEUE} failed: ${(err as Error)?.message ?? String(err)}`,
    );
    jobFailed?.(CLICK_RETENTION_QUEUE, err);
    throw err;
  }
}
