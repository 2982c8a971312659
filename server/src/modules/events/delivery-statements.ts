/**
 * The statements of event delivery (delivery.ts): the relay from the outbox to deliveries, the
 * load of a batch of attempts, and the recording of their outcomes. Plain SQL on pg's pool or on
 * one connection of it, so that pg-boss's own statements and these share its bounds.
 */

/**
 * Moves outbox rows into deliveries, one per enabled endpoint subscribed to the event, and queues
 * their first attempt, in one transaction (a crash before commit leaves the rows for the next
 * pass); also queues the deliveries a merchant asked to retry.
 */
export const RELAY = `with ev as (
  select id, organization_id, type from outbound_events
  where dispatched_at is null order by created_at, id limit $1 for update skip locked
), marked as (
  update outbound_events o set dispatched_at = now() from ev where o.id = ev.id
), fresh as (
  insert into webhook_deliveries (id, organization_id, endpoint_id, event_id, next_attempt_at, created_at)
  select gen_random_uuid(), ev.organization_id, e.id, ev.id, now(), now()
  from ev join webhook_endpoints e on e.organization_id = ev.organization_id and e.enabled and ev.type = any (e.events)
  on conflict on constraint webhook_deliveries_once do nothing
  returning id, attempts
), again as (
  update webhook_deliveries d set requeue = false
  where d.id in (select id from webhook_deliveries where requeue order by created_at limit $1 for update skip locked)
  returning d.id, d.attempts
)
select id, attempts from fresh union all select id, attempts from again`;

export const LOAD = `select d.id, d.endpoint_id, d.event_id, d.attempts, d.status, ev.type, ev.resource, ev.created_at as event_at,
  e.url, e.enabled, e.secret, e.previous_secret, e.previous_secret_expires_at
from webhook_deliveries d
join outbound_events ev on ev.id = d.event_id
join webhook_endpoints e on e.id = d.endpoint_id
where d.id = any ($1::uuid[])`;

/** Successful attempts of a batch, in one statement: the deliveries, and their endpoints no longer failing. */
export const SUCCEEDED = `with done as (
  update webhook_deliveries d set status = 'succeeded', attempts = d.attempts + 1, last_response_status = u.status,
    last_response_body = u.body, last_error = null, last_attempt_at = u.at, next_attempt_at = null
  from unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::timestamptz[]) as u (id, status, body, attempts, at)
  where d.id = u.id and d.attempts = u.attempts
  returning d.endpoint_id
)
update webhook_endpoints set failing_since = null where id in (select endpoint_id from done) and failing_since is not null`;

export const FAILED = `update webhook_deliveries set status = $2, attempts = attempts + 1, last_response_status = $3, last_response_body = $4,
  last_error = $5, last_attempt_at = $6, next_attempt_at = $7
where id = $1 and attempts = $8 returning attempts`;

/** A failed attempt's endpoint: failing since its first failure; disabled by a 410, or after failing for `$4` ms. */
export const ENDPOINT_FAILED = `update webhook_endpoints set
  failing_since = coalesce(failing_since, $2),
  disabled_reason = case
    when not enabled then disabled_reason
    when $3 then 'The endpoint answered 410 Gone'
    when coalesce(failing_since, $2) <= $2 - $4 * interval '1 millisecond' then 'Every delivery failed for 3 days'
    else disabled_reason end,
  enabled = enabled and not $3 and coalesce(failing_since, $2) > $2 - $4 * interval '1 millisecond',
  updated_at = case when enabled and ($3 or coalesce(failing_since, $2) <= $2 - $4 * interval '1 millisecond') then now() else updated_at end
where id = $1`;
