import type { MikroORM } from '@mikro-orm/postgresql';
import type { WebhookOutcome, WebhookProvider } from '@affiliate-attribution/contract';
import { kyselyOf } from '../db/database.js';

/**
 * The webhooks module's own records, and the only code of the module that touches the database:
 * the events handled (webhook_events) and the other ids of a charge (payment_references), typed
 * from their entities (webhook.entities.ts) through MikroORM's kysely.
 */
export class WebhookRecords {
  constructor(private readonly orm: MikroORM) {}

  /** Whether this event was handled before (then it changes nothing again). */
  async handled(organizationId: string, provider: WebhookProvider, eventId: string): Promise<boolean> {
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
  async remember(event: { organizationId: string; provider: WebhookProvider; eventId: string; eventType: string; outcome: WebhookOutcome; detail: string }): Promise<void> {
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
