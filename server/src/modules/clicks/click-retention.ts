import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
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
 * a click a visitor may still convert on is never deleted. Batches claim their clicks with SKIP
 * LOCKED (a run again after a crash shares the work), each its own statement and transaction.
 */
export const CLICK_RETENTION_QUEUE = 'click-retention';
export const CLICK_RETENTION_CRON = '27 3 * * *';

export const CLICK_RETENTION_DEFAULTS = {
  batch: 1_000,
  /** One run stops after this long; the next run goes on where it stopped. */
  maxRunMs: 10 * 60_000,
} as const;

/** Each organization with a retention, and its cut-off as of `$1`. */
const DUE = `due as (
  select o.id as organization_id,
    $1::timestamptz - greatest(o.click_retention_days, coalesce((select max(p.click_window_days) from programs p where p.organization_id = o.id), 0)) * interval '1 day' as cutoff
  from organizations o where o.click_retention_days is not null
)`;

const REFERENCED = (alias: string) => `(exists (select 1 from conversions v where v.click_id = ${alias}.id and v.organization_id = ${alias}.organization_id)
    or exists (select 1 from customers c where c.click_id = ${alias}.id and c.organization_id = ${alias}.organization_id))`;

/** One batch of at most `$2` clicks past their cut-off that still hold something to delete or clear. */
export const PRUNE_CLICKS = `with ${DUE}, old as (
  select k.id, k.organization_id from clicks k join due d on d.organization_id = k.organization_id
  where k.created_at < (select max(cutoff) from due) and k.created_at < d.cutoff
    and (k.ip is not null or k.user_agent is not null or not ${REFERENCED('k')})
  order by k.created_at
  limit $2 for update of k skip locked
), referenced as (
  select o.id, o.organization_id from old o where ${REFERENCED('o')}
), deleted as (
  delete from clicks k using old o
  where k.id = o.id and k.organization_id = o.organization_id and not exists (select 1 from referenced r where r.id = o.id)
  returning 1
), cleared as (
  update clicks k set ip = null, user_agent = null from referenced r where k.id = r.id and k.organization_id = r.organization_id
  returning 1
)
select (select count(*) from old)::int as examined, (select count(*) from deleted)::int as deleted, (select count(*) from cleared)::int as cleared`;

/** One batch of at most `$2` suppressed clicks past their organization's cut-off. */
export const PRUNE_SUPPRESSED_CLICKS = `with ${DUE}, old as (
  select s.id, s.organization_id from suppressed_clicks s join due d on d.organization_id = s.organization_id
  where s.created_at < (select max(cutoff) from due) and s.created_at < d.cutoff
  limit $2 for update of s skip locked
), deleted as (
  delete from suppressed_clicks s using old o where s.id = o.id and s.organization_id = o.organization_id returning 1
)
select (select count(*) from old)::int as examined, (select count(*) from deleted)::int as deleted, 0 as cleared`;

export interface PrunedClicks {
  /** Clicks deleted. */
  deleted: number;
  /** Clicks kept for the ledger, their IP and user agent cleared. */
  cleared: number;
  suppressedDeleted: number;
}

/** Applies every organization's click retention as of `now`, batch by batch, until nothing is left or `maxRunMs` has passed. */
export async function pruneClicks(query: Query, now: Date, options: { batch?: number; maxRunMs?: number } = {}): Promise<PrunedClicks> {
  const batch = options.batch ?? CLICK_RETENTION_DEFAULTS.batch;
  const until = Date.now() + (options.maxRunMs ?? CLICK_RETENTION_DEFAULTS.maxRunMs);
  const total: PrunedClicks = { deleted: 0, cleared: 0, suppressedDeleted: 0 };
  for (const statement of [PRUNE_CLICKS, PRUNE_SUPPRESSED_CLICKS]) {
    for (;;) {
      const { rows } = await query<{ examined: number; deleted: number; cleared: number }>(statement, [now, batch]);
      const { examined, deleted, cleared } = rows[0];
      if (statement === PRUNE_CLICKS) {
        total.deleted += deleted;
        total.cleared += cleared;
      } else total.suppressedDeleted += deleted;
      if (examined < batch || Date.now() > until) break;
    }
  }
  return total;
}

/** Schedules the click retention job and works it (every process that runs the job queue's schedules). */
export async function startClickRetention(boss: PgBoss, query: Query, logger: Logger): Promise<void> {
  await boss.createQueue(CLICK_RETENTION_QUEUE, { retryLimit: 3, retryDelay: 300, expireInSeconds: 30 * 60, deleteAfterSeconds: 7 * 24 * 60 * 60 });
  await boss.schedule(CLICK_RETENTION_QUEUE, CLICK_RETENTION_CRON);
  await boss.work(CLICK_RETENTION_QUEUE, { pollingIntervalSeconds: 60 }, async () => {
    const pruned = await pruneClicks(query, new Date());
    logger.info(pruned, 'clicks: applied the organizations’ click retention');
  });
}
