import type { OutboundEventType } from '@affiliate-attribution/contract';
import { sql as raw, type Compilable, type Kysely, type RawBuilder } from 'kysely';
import type { Tables } from '../../db/database.js';

/**
 * The transactional outbox (table `outbound_events`, and `outbound_event_batches` for the batched
 * hot writes): an event row is written by the very statement or transaction that makes the change
 * it describes, so a committed change always has its event and a rolled-back one never does. The row carries the resource as that statement wrote it (a
 * snapshot, `to_jsonb` of the row), never anything read from a cache or rebuilt later; delivery
 * turns it into the REST API's shape with the module's own serializer (payloads.ts).
 *
 * An event is written only when the organization has an enabled endpoint subscribed to its type:
 * decided inside the same statement (an index probe on webhook_endpoints), so an organization
 * without endpoints pays no extra row and no extra round trip. `organizationId` is SQL (a column or
 * a parameter); given as a parameter, the test is made once for the statement, before any row.
 */
export function subscribedSql(type: OutboundEventType, organizationId: string): string {
  return `exists (select 1 from webhook_endpoints e where e.organization_id = ${organizationId} and e.enabled and '${type}' = any (e.events))`;
}

/**
 * The SQL text of a data-modifying CTE's body that writes one `type` event per row of the CTE
 * `source` (whole rows of the resource's table, with `organization_id`), for statements written
 * as text: `…, payout_events as (${eventsOf('payout.created', 'created')}) select …`. `type` and
 * `source` come from code (an event name of the contract, a CTE name), never from input.
 */
export function eventsOf(type: OutboundEventType, source: string): string {
  if (!/^[a-z_]+$/.test(source)) throw new Error(`eventsOf: not a CTE name: ${source}`);
  return `insert into outbound_events (id, organization_id, type, resource, created_at)
    select gen_random_uuid(), x.organization_id, '${type}', to_jsonb(x), statement_timestamp()
    from ${source} x
    where ${subscribedSql(type, 'x.organization_id')}`;
}

/**
 * For the batched hot writes (many requests' rows in one statement: conversions, renewals,
 * customers): the body of one data-modifying CTE that writes ONE row per organization into
 * `outbound_event_batches`, holding the events of every `[type, source]` pair (one per row of the
 * CTE `source`, as eventsOf writes them), for the relay to expand into `outbound_events` rows
 * (delivery-statements.ts EXPAND_BATCHES). Same transaction, same snapshot of each row (`to_json`,
 * kept as text until expanded), same "only when subscribed"; a heap row and an index entry per
 * statement instead of per event (a third of the cost per event, measured on PostgreSQL alone).
 */
export function batchedEventsOf(parts: readonly (readonly [OutboundEventType, string])[]): string {
  for (const [, source] of parts) if (!/^[a-z_]+$/.test(source)) throw new Error(`batchedEventsOf: not a CTE name: ${source}`);
  const events = parts
    .map(([type, source]) => `select x.organization_id, json_build_object('type', '${type}', 'resource', to_json(x)) as event from ${source} x where ${subscribedSql(type, 'x.organization_id')}`)
    .join('\n    union all\n    ');
  return `insert into outbound_event_batches (organization_id, events, created_at)
    select e.organization_id, json_agg(e.event), statement_timestamp()
    from (${events}) e
    group by e.organization_id`;
}

/**
 * A statement that changes rows (an INSERT, UPDATE or DELETE … RETURNING *) with its `type` events
 * written by the same statement: `with changed as (<query>), events as (…) select * from changed`.
 */
export function withEvents<R>(query: Compilable<R>, type: OutboundEventType): RawBuilder<R> {
  return raw<R>`with changed as (${query}), changed_events as (${raw.raw(eventsOf(type, 'changed'))}) select * from changed`;
}

/**
 * Writes `type` events for rows just written in the transaction `trx` (a refund's): one statement,
 * in that transaction, never a transaction of its own. `rows` are whole rows of the resource's
 * table as returned by the change (RETURNING *).
 */
export async function recordEvents(trx: Kysely<Tables>, type: OutboundEventType, rows: readonly { organization_id: string }[]): Promise<void> {
  if (rows.length === 0) return;
  await raw`insert into outbound_events (id, organization_id, type, resource, created_at)
    select gen_random_uuid(), (r ->> 'organization_id')::uuid, ${raw.lit(type)}, r, statement_timestamp()
    from jsonb_array_elements(${JSON.stringify(rows)}::jsonb) r
    where ${raw.raw(subscribedSql(type, "(r ->> 'organization_id')::uuid"))}`.execute(trx);
}

/**
 * Every event written, whether still in its batch or expanded (organization_id, type, created_at):
 * what the outbox holds, for counting (tests, bench/events.ts).
 */
export const EVENTS_WRITTEN = `(select organization_id, type, created_at from outbound_events
  union all
  select b.organization_id, e ->> 'type', b.created_at from outbound_event_batches b cross join lateral json_array_elements(b.events) e)`;
