import { sql } from 'kysely';
import type { DeliveryRow } from './delivery-records.js';
import { batchEventsSql } from './outbox.js';

/**
 * The statements of event delivery (delivery.ts): the relay from the outbox to deliveries, the
 * load of a batch of attempts, and the recording of their outcomes. kysely's `sql`, run through
 * the Db handle (db/sql.ts) on the pool or in a transaction, within the delivery's bound on
 * connections, which pg-boss's own statements share.
 */

/**
 * What an attempt needs of a delivery: its row, its event's snapshot, its endpoint's URL and
 * secrets, and its organization's mode (test data's events say `livemode: false`).
 */
const ATTEMPT_COLUMNS =
  sql.raw(`d.id, d.endpoint_id, d.event_id, d.attempts, d.status, ev.type, ev.resource, ev.created_at as event_at,
  e.url, e.enabled, e.secret, e.previous_secret, e.previous_secret_expires_at,
  (select o.livemode from organizations o where o.id = d.organization_id) as livemode`);

/**
 * Expands the oldest outbox batches (outbox.ts batchedEventsOf) into `outbound_events` rows, one
 * per event, each with its own id (its `webhook-id` from then on) and its resource's JSON made
 * from the row the batch holds, in the transaction that deletes them: an event is expanded once,
 * whichever instance's relay takes its batch (SKIP LOCKED), and keeps its batch's time. Run by
 * the relay before RELAY, in the same transaction. Both are one organization's: the relay goes
 * organization by organization (relayOrganizations), so that on Citus each of its transactions is
 * one shard's, as SKIP LOCKED needs.
 */
export const expandBatches = (limit: number, organization: string) => sql`with taken as (
  delete from outbound_event_batches where organization_id = ${organization} and ctid = any (array(
    select ctid from outbound_event_batches where organization_id = ${organization} order by created_at limit ${limit} for update skip locked))
  returning *
)
insert into outbound_events (id, organization_id, type, resource, created_at)
select gen_random_uuid(), e.organization_id, e.type, e.resource, e.created_at
from (${sql.raw(batchEventsSql('taken'))}) e`;

/**
 * Moves outbox rows into deliveries, one per enabled endpoint subscribed to the event, and answers
 * each new delivery with what its first attempt needs, in one statement (the relay's transaction
 * also queues the backstop job: a crash before commit leaves the rows for the next pass); also
 * takes the deliveries a merchant asked to retry.
 */
export const relay = (limit: number, organization: string) => {
  const org = sql`${organization}::uuid`;
  return sql<DeliveryRow>`with ev as (
  select id, organization_id, type, resource, created_at from outbound_events
  where organization_id = ${org} and dispatched_at is null order by created_at, id limit ${limit} for update skip locked
), marked as (
  update outbound_events o set dispatched_at = now() from ev where o.id = ev.id and o.organization_id = ${org}
), fresh as (
  insert into webhook_deliveries (id, organization_id, endpoint_id, event_id, next_attempt_at, created_at)
  select gen_random_uuid(), ev.organization_id, e.id, ev.id, now(), now()
  from ev join webhook_endpoints e on e.organization_id = ${org} and e.enabled and ev.type = any (e.events)
  on conflict on constraint webhook_deliveries_once do nothing
  returning id, organization_id, endpoint_id, event_id, attempts, status
), again as (
  update webhook_deliveries d set requeue = false
  where d.organization_id = ${org}
    and d.id in (select id from webhook_deliveries where organization_id = ${org} and requeue order by created_at limit ${limit} for update skip locked)
  returning d.id, d.organization_id, d.endpoint_id, d.event_id, d.attempts, d.status
)
select ${ATTEMPT_COLUMNS}
from fresh d join ev on ev.id = d.event_id join webhook_endpoints e on e.id = d.endpoint_id and e.organization_id = ${org}
union all
select ${ATTEMPT_COLUMNS}
from again d join outbound_events ev on ev.id = d.event_id and ev.organization_id = ${org}
join webhook_endpoints e on e.id = d.endpoint_id and e.organization_id = ${org}`;
};

/**
 * The organizations the relay has work for (batches to expand, events to dispatch, deliveries a
 * merchant asked to retry), oldest work first, at most `limit`: read without locks, on every shard.
 */
export const relayOrganizations = (limit: number) => sql<{ organization_id: string }>`select organization_id from (
  select organization_id, min(created_at) as since from outbound_event_batches group by organization_id
  union all
  select organization_id, min(created_at) from outbound_events where dispatched_at is null group by organization_id
  union all
  select organization_id, min(created_at) from webhook_deliveries where requeue group by organization_id
) w group by organization_id order by min(since) limit ${limit}`;

/** The pending ones of a job's deliveries, with what their attempts need (those recorded meanwhile are not loaded). */
export const load = (deliveryIds: string[]) => sql<DeliveryRow>`select ${ATTEMPT_COLUMNS}
from webhook_deliveries d
join outbound_events ev on ev.id = d.event_id and ev.organization_id = d.organization_id
join webhook_endpoints e on e.id = d.endpoint_id and e.organization_id = d.organization_id
where d.id = any (${deliveryIds}::uuid[]) and d.status = 'pending'`;

/** Successful attempts of a batch, in one statement: the deliveries, and their endpoints no longer failing. */
export const succeeded = (batch: {
  ids: string[];
  statuses: number[];
  bodies: (string | null)[];
  attempts: number[];
  at: Date[];
}) => sql`with done as (
  update webhook_deliveries d set status = 'succeeded', attempts = d.attempts + 1, last_response_status = u.status,
    last_response_body = u.body, last_error = null, last_attempt_at = u.at, next_attempt_at = null
  from unnest(${batch.ids}::uuid[], ${batch.statuses}::int[], ${batch.bodies}::text[], ${batch.attempts}::int[], ${batch.at}::timestamptz[]) as u (id, status, body, attempts, at)
  where d.id = u.id and d.attempts = u.attempts
  returning d.endpoint_id
)
update webhook_endpoints set failing_since = null where id in (select endpoint_id from done) and failing_since is not null`;

/** A failed attempt recorded, if the delivery is still at `attempts` (none: recorded meanwhile). */
export const failed = (f: {
  id: string;
  status: 'failed' | 'pending';
  responseStatus: number | null;
  body: string | null;
  error: string | null;
  at: Date;
  nextAt: Date | null;
  attempts: number;
}) => sql`update webhook_deliveries set status = ${f.status}, attempts = attempts + 1, last_response_status = ${f.responseStatus}, last_response_body = ${f.body},
  last_error = ${f.error}, last_attempt_at = ${f.at}, next_attempt_at = ${f.nextAt}
where id = ${f.id} and attempts = ${f.attempts} returning attempts`;

/**
 * A failed attempt's endpoint: failing since its first failure; disabled by a 410, or after failing
 * for `disableAfterMs` (the limit computed here, not in SQL: Citus refuses timestamp arithmetic, a
 * STABLE function, inside CASE or COALESCE).
 */
export const endpointFailed = (endpointId: string, at: Date, gone: boolean, disableAfterMs: number) => {
  const now = sql`${at}::timestamptz`;
  const since = sql`coalesce(failing_since, ${now})`;
  const tooLong = sql`${since} <= ${new Date(at.getTime() - disableAfterMs)}::timestamptz`;
  const isGone = sql`${gone}::boolean`;
  return sql`update webhook_endpoints set
  failing_since = ${since},
  disabled_reason = case
    when not enabled then disabled_reason
    when ${isGone} then 'The endpoint answered 410 Gone'
    when ${tooLong} then 'Every delivery failed for 3 days'
    else disabled_reason end,
  enabled = enabled and not ${isGone} and not (${tooLong}),
  updated_at = case when enabled and (${isGone} or ${tooLong}) then ${now} else updated_at end
where id = ${endpointId}`;
};
