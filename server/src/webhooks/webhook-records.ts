import type { MikroORM } from '@mikro-orm/postgresql';
import type { WebhookOutcome, LoggedWebhookProvider } from '@affiliate-attribution/contract';
import { sql } from 'kysely';
import { kyselyOf, readFromReplica } from '../db/database.js';

/** A position in the log of received webhooks, newest first (webhook-log.ts). */
export interface LogPosition {
  at: Date;
  /** At the same instant, events come before rejections. */
  kind: 'event' | 'rejection';
  provider: string;
  /** The event id, or the rejection's reason. */
  key: string;
}

export interface LogFilter {
  provider?: LoggedWebhookProvider | undefined;
  outcome?: 'processed' | 'ignored' | undefined;
}

/**
 * The webhooks module's own records, and the only code of the module that touches the database:
 * the events handled (webhook_events), the requests rejected before verification, counted per
 * reason (webhook_rejections), and the other ids of a charge (payment_references), typed from
 * their entities (webhook.entities.ts) through MikroORM's kysely.
 */
export class WebhookRecords {
  constructor(private readonly orm: MikroORM) {}

  /**
   * The two organizations a webhook URL may land in: the live one and its test twin
   * (organizations.live_organization_id). The URL carries the live id, or the twin's (then there is
   * no live side: `live` is undefined). Undefined when the id names no organization.
   */
  async landings(
    urlOrganizationId: string,
  ): Promise<{ live: string | undefined; test: string | undefined; urlIsTest: boolean } | undefined> {
    const rows = await kyselyOf(this.orm)
      .selectFrom('organizations')
      .select(['id', 'live_organization_id'])
      .where((eb) => eb.or([eb('id', '=', urlOrganizationId), eb('live_organization_id', '=', urlOrganizationId)]))
      .execute();
    const named = rows.find((row) => row.id === urlOrganizationId);
    if (!named) return undefined;
    if (named.live_organization_id !== null) return { live: undefined, test: named.id, urlIsTest: true };
    const twin = rows.find((row) => row.live_organization_id === urlOrganizationId);
    return { live: named.id, test: twin?.id, urlIsTest: false };
  }

  /** Whether this event was handled before (then it changes nothing again). */
  async handled(organizationId: string, provider: LoggedWebhookProvider, eventId: string): Promise<boolean> {
    const row = await kyselyOf(this.orm)
      .selectFrom('webhook_events')
      .select('outcome')
      .where('organization_id', '=', organizationId)
      .where('provider', '=', provider)
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Remembers a handled event; a concurrent delivery of the same event that got here first wins. */
  async remember(event: {
    organizationId: string;
    provider: LoggedWebhookProvider;
    eventId: string;
    eventType: string;
    outcome: WebhookOutcome;
    detail: string;
  }): Promise<void> {
    await kyselyOf(this.orm)
      .insertInto('webhook_events')
      .values({
        organization_id: event.organizationId,
        provider: event.provider,
        event_id: event.eventId,
        event_type: event.eventType,
        outcome: event.outcome,
        detail: event.detail,
        received_at: new Date(),
      })
      .onConflict((conflict) => conflict.doNothing())
      .execute();
  }

  /**
   * Counts a request refused before verification under its reason. Only for an organization that
   * exists (the id in the URL is anyone's to write); nothing of the request itself is stored.
   */
  async rememberRejection(
    organizationId: string,
    provider: LoggedWebhookProvider,
    reason: string,
    at: Date,
  ): Promise<void> {
    const db = kyselyOf(this.orm);
    await db
      .insertInto('webhook_rejections')
      .columns(['organization_id', 'provider', 'reason', 'requests', 'first_received_at', 'last_received_at'])
      .expression(
        db
          .selectFrom('organizations')
          .select([
            sql<string>`${organizationId}::uuid`.as('organization_id'),
            sql<string>`${provider}`.as('provider'),
            sql<string>`${reason}`.as('reason'),
            sql<bigint>`1`.as('requests'),
            sql<Date>`${at}::timestamptz`.as('first_received_at'),
            sql<Date>`${at}::timestamptz`.as('last_received_at'),
          ])
          .where('id', '=', organizationId),
      )
      .onConflict((conflict) =>
        conflict.columns(['organization_id', 'provider', 'reason']).doUpdateSet({
          requests: sql<bigint>`webhook_rejections.requests + 1`,
          last_received_at: sql<Date>`greatest(webhook_rejections.last_received_at, excluded.last_received_at)`,
        }),
      )
      .execute();
  }

  /**
   * The handled events after a position of the log (newest first), one more than the page; on the
   * index (organization_id, received_at, provider, event_id). Lists may lag on a replica.
   */
  async eventsBefore(organizationId: string, filter: LogFilter, before: LogPosition | undefined, limit: number) {
    return readFromReplica(this.orm, 'GET /api/integrations/events', (source) => {
      let query = kyselyOf(source)
        .selectFrom('webhook_events')
        .select(['provider', 'event_id', 'event_type', 'outcome', 'detail', 'received_at'])
        .where('organization_id', '=', organizationId);
      if (filter.provider) query = query.where('provider', '=', filter.provider);
      if (filter.outcome) query = query.where('outcome', '=', filter.outcome);
      if (before) {
        // At the cursor's instant events come before rejections: after a rejection, only older events.
        query =
          before.kind === 'event'
            ? query.where(
                sql<boolean>`(received_at, provider, event_id) < (${before.at}, ${before.provider}, ${before.key})`,
              )
            : query.where('received_at', '<', before.at);
      }
      return query
        .orderBy('received_at', 'desc')
        .orderBy('provider', 'desc')
        .orderBy('event_id', 'desc')
        .limit(limit + 1)
        .execute();
    });
  }

  /** The rejections after a position of the log (newest first), one more than the page. */
  async rejectionsBefore(
    organizationId: string,
    provider: LoggedWebhookProvider | undefined,
    before: LogPosition | undefined,
    limit: number,
  ) {
    return readFromReplica(this.orm, 'GET /api/integrations/events', (source) => {
      let query = kyselyOf(source)
        .selectFrom('webhook_rejections')
        .select(['provider', 'reason', 'requests', 'first_received_at', 'last_received_at'])
        .where('organization_id', '=', organizationId);
      if (provider) query = query.where('provider', '=', provider);
      if (before) {
        query =
          before.kind === 'rejection'
            ? query.where(
                sql<boolean>`(last_received_at, provider, reason) < (${before.at}, ${before.provider}, ${before.key})`,
              )
            : query.where('last_received_at', '<=', before.at);
      }
      return query
        .orderBy('last_received_at', 'desc')
        .orderBy('provider', 'desc')
        .orderBy('reason', 'desc')
        .limit(limit + 1)
        .execute();
    });
  }

  /** Links another id of a charge to its conversion's external_id; false when it was linked already. */
  async linkReference(organizationId: string, reference: string, externalId: string): Promise<boolean> {
    const inserted = await kyselyOf(this.orm)
      .insertInto('payment_references')
      .values({ organization_id: organizationId, reference, external_id: externalId, created_at: new Date() })
      .onConflict((conflict) => conflict.doNothing())
      .returning('reference')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  /** The external_id of the first candidate that names a conversion, directly or through a payment reference. */
  async externalIdFor(organizationId: string, candidates: readonly string[]): Promise<string | undefined> {
    const db = kyselyOf(this.orm);
    for (const candidate of candidates) {
      const direct = await db
        .selectFrom('conversions')
        .select('external_id')
        .where('organization_id', '=', organizationId)
        .where('external_id', '=', candidate)
        .executeTakeFirst();
      if (direct) return direct.external_id;
      const referenced = await db
        .selectFrom('payment_references')
        .select('external_id')
        .where('organization_id', '=', organizationId)
        .where('reference', '=', candidate)
        .executeTakeFirst();
      if (referenced) return referenced.external_id;
    }
    return undefined;
  }
}
