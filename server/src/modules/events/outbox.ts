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

/** subscribedSql's test on the organization given as a parameter (kysely's `sql`): made once for the statement. */
export const subscribedTo = (type: OutboundEventType, organizationId: string) =>
  raw`exists (select 1 from webhook_endpoints e where e.organization_id = ${organizationId}::uuid and e.enabled and ${raw.lit(type)} = any (e.events))`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An organization's id as an SQL literal, for the outbox's statements: on Citus a statement's
 * shard is found from a constant (or parameter) organization_id on every distributed table it
 * reads, so the subscription probe names the organization rather than a column of the rows just
 * written (a correlated subquery over them, which Citus cannot run, or a scan of every shard).
 * Only a UUID is taken: the id comes from the authenticated context or a row, never from text.
 */
export function organizationLiteral(organizationId: string): string {
  if (!UUID.test(organizationId)) throw new Error(`not an organization id: ${organizationId}`);
  return `'${organizationId}'::uuid`;
}

/** `source` is spliced into SQL text: only a CTE name written in code (lower case and underscores) is taken. */
function cteName(caller: string, source: string): string {
  if (!/^[a-z_]+$/.test(source)) throw new Error(`${caller}: not a CTE name: ${source}`);
  return source;
}

/**
 * The SQL text of a data-modifying CTE's body that writes one `type` event per row of the CTE
 * `source` (whole rows of the resource's table, all of `organizationId`), for statements written
 * as text: `…, payout_events as (${eventsOf('payout.created', 'created', organizationId)}) select …`.
 * `type` and `source` come from code (an event name of the contract, a CTE name), never from
 * input; `organizationId` is a UUID (organizationLiteral) or, with `parameter`, SQL naming one
 * (`$1`): the statement's organization, so that it stays one shard's on Citus.
 */
export function eventsOf(type: OutboundEventType, source: string, organizationId: string, parameter = false): string {
  cteName('eventsOf', source);
  const organization = parameter ? organizationId : organizationLiteral(organizationId);
  return `insert into outbound_events (id, organization_id, type, resource, created_at)
    select gen_random_uuid(), x.organization_id, '${type}', to_jsonb(x), statement_timestamp()
    from ${source} x
    where x.organization_id = ${organization} and ${subscribedSql(type, organization)}`;
}

/**
 * The events the batched hot writes carry (conversions, renewals, customers), each in a `json`
 * column of `outbound_event_batches` of its own: a JSON array of whole rows of the resource's
 * table, as the statement wrote them. JSON, not an array of the table's row type: a column typed
 * with a table's row type would make PostgreSQL refuse any later migration that rewrites that
 * table (a column added with a default, a type changed). `json` (text kept as produced, not
 * parsed into jsonb on the hot path); the relay makes each event's jsonb when it expands the batch
 * (delivery-statements.ts EXPAND_BATCHES).
 */
export const BATCHED_EVENTS = {
  'conversion.created': { column: 'conversion_created' },
  'commission.created': { column: 'commission_created' },
  'customer.created': { column: 'customer_created' },
  'customer.updated': { column: 'customer_updated' },
} as const satisfies Partial<Record<OutboundEventType, { column: string }>>;

export type BatchedEventType = keyof typeof BATCHED_EVENTS;

const BATCHED = Object.entries(BATCHED_EVENTS) as [BatchedEventType, (typeof BATCHED_EVENTS)[BatchedEventType]][];

/**
 * For the batched hot writes (many requests' rows of one organization in one statement: the
 * batchers group by organization, db/batched-insert.ts): the body of one data-modifying CTE that
 * writes ONE row into `outbound_event_batches`, holding the events of every `[type, source]` pair
 * (`source`: a CTE of whole rows of the type's table, RETURNING *) in the type's column, for the
 * relay to expand into `outbound_events` rows. Same transaction, same values as written, same
 * "only when subscribed", decided once per type of the statement (not per row); a heap row and an
 * index entry per statement instead of per event. `source`s come from code (CTE names), never
 * from input; `organization` is SQL naming the statement's organization (a parameter, `$9::uuid`),
 * which every source row belongs to: a constant for the subscription probe keeps the statement one
 * shard's on Citus.
 */
export function batchedEventsOf(parts: readonly (readonly [BatchedEventType, string])[], organization: string): string {
  const types = new Set<string>();
  for (const [type, source] of parts) {
    cteName('batchedEventsOf', source);
    if (types.has(type)) throw new Error(`batchedEventsOf: ${type} twice`);
    types.add(type);
  }
  const columns = parts.map(([type]) => BATCHED_EVENTS[type].column);
  const arrays = parts.map(([type, source]) => {
    const { column } = BATCHED_EVENTS[type];
    return `case when ${subscribedSql(type, organization)} then (select json_agg(x) from ${source} x where x.organization_id = ${organization}) end as ${column}`;
  });
  return `insert into outbound_event_batches (organization_id, ${columns.join(', ')}, created_at)
    select ${organization}, ${columns.map((c) => `b.${c}`).join(', ')}, statement_timestamp()
    from (select ${arrays.join(',\n      ')}) b
    where ${columns.map((c) => `b.${c} is not null`).join(' or ')}`;
}

/**
 * The events of the batches taken (`taken`: a CTE of whole outbound_event_batches rows), one row
 * each (organization_id, type, created_at, and with `resources` the resource as jsonb).
 */
export function batchEventsSql(taken: string, resources = true): string {
  const resource = resources ? `, x::jsonb as resource` : '';
  return BATCHED.map(
    ([type, { column }]) =>
      `select t.organization_id, '${type}' as type, t.created_at${resource} from ${taken} t cross join lateral json_array_elements(t.${column}) x`,
  ).join('\n  union all\n  ');
}

/**
 * A statement that changes rows (an INSERT, UPDATE or DELETE … RETURNING *) with its `type` events
 * written by the same statement: `with changed as (<query>), events as (…) select * from changed`.
 */
export function withEvents<R>(query: Compilable<R>, type: OutboundEventType, organizationId: string): RawBuilder<R> {
  return raw<R>`with changed as (${query}), changed_events as (${raw.raw(eventsOf(type, 'changed', organizationId))}) select * from changed`;
}

/**
 * Writes `type` events for rows just written in the transaction `trx` (a refund's): one statement,
 * in that transaction, never a transaction of its own. `rows` are whole rows of the resource's
 * table as returned by the change (RETURNING *).
 */
export async function recordEvents(
  trx: Kysely<Tables>,
  type: OutboundEventType,
  rows: readonly { organization_id: string }[],
): Promise<void> {
  // One statement per organization (in practice one): on Citus, one shard's each.
  for (const organizationId of new Set(rows.map((r) => r.organization_id))) {
    const organization = organizationLiteral(organizationId);
    const own = rows.filter((r) => r.organization_id === organizationId);
    await raw`insert into outbound_events (id, organization_id, type, resource, created_at)
      select gen_random_uuid(), ${raw.raw(organization)}, ${raw.lit(type)}, r, statement_timestamp()
      from jsonb_array_elements(${JSON.stringify(own)}::jsonb) r
      where ${raw.raw(subscribedSql(type, organization))}`.execute(trx);
  }
}

/**
 * Every event written, whether still in its batch or expanded (organization_id, type, created_at):
 * what the outbox holds, for counting (tests, bench/events.ts).
 */
export const EVENTS_WRITTEN = `(select organization_id, type, created_at from outbound_events
  union all
  select organization_id, type, created_at from (${batchEventsSql('outbound_event_batches', false)}) b)`;
