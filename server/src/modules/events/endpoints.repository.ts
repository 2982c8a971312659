import type { MikroORM } from '@mikro-orm/postgresql';
import type { OutboundEventType, WebhookDeliveryStatus } from '@affiliate-attribution/contract';
import { Db } from '../../db/sql.js';
import { ofAnotherAccount } from '../../db/owned-row.js';
import { ForbiddenError, NotFoundError } from '../../http/errors.js';
import type { CursorPosition } from '../../http/pagination.js';
import { isUuid } from '../../http/serialize.js';
import { sql } from 'kysely';

/**
 * The events module's way to the endpoints and the delivery log, in plain SQL on the service's
 * pool (db/sql.ts): these tables have no entities, so that the module stays within its own files.
 */
export interface EndpointRecord {
  id: string;
  organization_id: string;
  url: string;
  description: string | null;
  events: OutboundEventType[];
  enabled: boolean;
  disabled_reason: string | null;
  /** Stored form (security/secret-box.ts): encrypted when ENCRYPTION_KEY is set. */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  secret_rotated_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRecord {
  id: string;
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: OutboundEventType;
  status: WebhookDeliveryStatus;
  attempts: number;
  last_response_status: number | null;
  last_response_body: string | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

export interface EndpointChanges {
  url?: string;
  events?: OutboundEventType[];
  description?: string | null;
  enabled?: boolean;
}

const DELIVERY_COLUMNS = `d.id, d.organization_id, d.endpoint_id, d.event_id, ev.type as event_type, d.status, d.attempts, d.last_response_status,
  d.last_response_body, d.last_error, d.last_attempt_at, d.next_attempt_at, d.created_at`;

export class EndpointsRepository {
  constructor(private readonly orm: MikroORM) {}

  private db(): Db {
    return Db.of(this.orm);
  }

  async insert(
    row: Pick<EndpointRecord, 'id' | 'organization_id' | 'url' | 'description' | 'events' | 'secret'>,
  ): Promise<EndpointRecord> {
    const [created] = await this.db().rows(
      sql<EndpointRecord>`insert into webhook_endpoints (id, organization_id, url, description, events, secret) values (${row.id}, ${row.organization_id}, ${row.url}, ${row.description}, ${row.events}::text[], ${row.secret}) returning *`,
    );
    return created;
  }

  /** Oldest first, one more than the page. */
  page(organizationId: string, after: CursorPosition | undefined, limit: number): Promise<EndpointRecord[]> {
    return after
      ? this.db().rows(
          sql<EndpointRecord>`select * from webhook_endpoints where organization_id = ${organizationId} and (created_at, id) > (${after.at}, ${after.id}::uuid) order by created_at, id limit ${limit + 1}`,
        )
      : this.db().rows(
          sql<EndpointRecord>`select * from webhook_endpoints where organization_id = ${organizationId} order by created_at, id limit ${limit + 1}`,
        );
  }

  /** The ownership rule (as db/owned-row.ts): this organization's endpoint; another's: 403; none, or only in the other mode: 404. One statement. */
  async findOwned(organizationId: string, id: string, db: Db = this.db()): Promise<EndpointRecord> {
    return owned<EndpointRecord>(db, 'webhook_endpoints', 'Webhook endpoint not found', organizationId, id);
  }

  update(organizationId: string, id: string, changes: EndpointChanges): Promise<EndpointRecord> {
    return this.db().transaction(async (db) => {
      const current = await this.findOwned(organizationId, id, db);
      const enabling = changes.enabled === true && !current.enabled;
      const [updated] =
        await db.rows(sql<EndpointRecord>`update webhook_endpoints set url = ${changes.url ?? current.url}, events = ${changes.events ?? current.events}::text[], description = ${changes.description === undefined ? current.description : changes.description}, enabled = ${changes.enabled ?? current.enabled},
           disabled_reason = case when ${enabling || changes.enabled === false} then null else disabled_reason end,
           failing_since = case when ${enabling} then null else failing_since end,
           updated_at = now()
         where id = ${current.id} returning *`);
      return updated;
    });
  }

  async delete(organizationId: string, id: string): Promise<EndpointRecord> {
    return this.db().transaction(async (db) => {
      const current = await this.findOwned(organizationId, id, db);
      await db.rows(sql`delete from webhook_endpoints where id = ${current.id}`);
      return current;
    });
  }

  /** The new secret signs from now on; the current one alongside it until `previousUntil`. */
  rotate(organizationId: string, id: string, secret: string, previousUntil: Date): Promise<EndpointRecord> {
    return this.db().transaction(async (db) => {
      const current = await this.findOwned(organizationId, id, db);
      const [updated] =
        await db.rows(sql<EndpointRecord>`update webhook_endpoints set previous_secret = secret, previous_secret_expires_at = ${previousUntil}, secret = ${secret}, secret_rotated_at = now(), updated_at = now()
         where id = ${current.id} returning *`);
      return updated;
    });
  }

  /** Newest first, one more than the page. */
  deliveries(
    organizationId: string,
    endpointId: string,
    status: WebhookDeliveryStatus | undefined,
    before: CursorPosition | undefined,
    limit: number,
  ): Promise<DeliveryRecord[]> {
    const conditions = [sql`d.organization_id = ${organizationId}`, sql`d.endpoint_id = ${endpointId}`];
    if (status) conditions.push(sql`d.status = ${status}`);
    if (before) conditions.push(sql`(d.created_at, d.id) < (${before.at}, ${before.id}::uuid)`);
    return this.db().rows(
      sql<DeliveryRecord>`select ${sql.raw(DELIVERY_COLUMNS)} from webhook_deliveries d join outbound_events ev on ev.id = d.event_id and ev.organization_id = d.organization_id
       where ${sql.join(conditions, sql` and `)} order by d.created_at desc, d.id desc limit ${limit + 1}`,
    );
  }

  /**
   * Marks an owned delivery for sending again now: the relay (delivery.ts) queues it. Refused (409)
   * when its endpoint is disabled.
   */
  requeue(organizationId: string, id: string): Promise<{ delivery: DeliveryRecord; endpointEnabled: boolean }> {
    return this.db().transaction(async (db) => {
      const found = await owned<{ id: string; endpoint_id: string }>(
        db,
        'webhook_deliveries',
        'Webhook delivery not found',
        organizationId,
        id,
      );
      const [endpoint] = await db.rows(
        sql<{
          enabled: boolean;
        }>`select enabled from webhook_endpoints where organization_id = ${organizationId} and id = ${found.endpoint_id} for share`,
      );
      if (endpoint?.enabled) {
        await db.rows(
          sql`update webhook_deliveries set requeue = true, status = 'pending', next_attempt_at = now() where organization_id = ${organizationId} and id = ${found.id}`,
        );
      }
      const [delivery] = await db.rows(
        sql<DeliveryRecord>`select ${sql.raw(DELIVERY_COLUMNS)} from webhook_deliveries d join outbound_events ev on ev.id = d.event_id and ev.organization_id = d.organization_id
         where d.organization_id = ${organizationId} and d.id = ${found.id}`,
      );
      return { delivery: delivery, endpointEnabled: !!endpoint?.enabled };
    });
  }
}

async function owned<R>(
  db: Db,
  table: 'webhook_endpoints' | 'webhook_deliveries',
  notFound: string,
  organizationId: string,
  id: string,
): Promise<R> {
  if (!isUuid(id)) throw new NotFoundError(notFound);
  const from = sql.table(table);
  const row = await db.one(
    sql<
      Record<string, unknown> & { owned_by_caller: boolean }
    >`(select t.*, true as owned_by_caller from ${from} t where organization_id = ${organizationId} and id = ${id}::uuid)
      union all
      (select t.*, false from ${from} t where id = ${id}::uuid and ${ofAnotherAccount('t', organizationId)})
      limit 1`,
  );
  if (!row) throw new NotFoundError(notFound);
  if (!row.owned_by_caller) throw new ForbiddenError();
  const { owned_by_caller: _owned, ...own } = row;
  return own as R;
}
