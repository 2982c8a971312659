import type { MikroORM } from '@mikro-orm/postgresql';
import type { ReceivedWebhookOutcome, LoggedWebhookProvider } from '@affiliate-attribution/contract';
import type { ReceivedWebhookEvent } from '../resources.js';
import { BadRequestError } from '../http/errors.js';
import { pageLimit } from '../http/pagination.js';
import { iso } from '../http/serialize.js';
import { LOGGED_WEBHOOK_PROVIDERS } from '@affiliate-attribution/contract';
import { WebhookRecords, type LogPosition } from './webhook-records.js';

/** The longest reason kept for a rejection (ours are short; a provider library's could grow). */
const REASON_MAX = 300;

interface Entry {
  position: LogPosition;
  event: ReceivedWebhookEvent;
}

/**
 * The two sources, each already in the log's order as PostgreSQL sorted it, merged: newest first,
 * and at the same instant events before rejections. Provider and key are never compared here, so
 * the order is PostgreSQL's (its collation), the one the cursor's comparison uses.
 */
function merge(events: Entry[], rejections: Entry[]): Entry[] {
  const merged: Entry[] = [];
  let i = 0;
  let j = 0;
  while (i < events.length || j < rejections.length) {
    if (
      j >= rejections.length ||
      (i < events.length && events[i].position.at.getTime() >= rejections[j].position.at.getTime())
    )
      merged.push(events[i++]);
    else merged.push(rejections[j++]);
  }
  return merged;
}

function encodePosition(p: LogPosition): string {
  return Buffer.from(JSON.stringify([p.at.toISOString(), p.kind, p.provider, p.key])).toString('base64url');
}

function decodePosition(cursor: string | undefined): LogPosition | undefined {
  if (cursor === undefined) return undefined;
  try {
    const [at, kind, provider, key] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const date = new Date(at as string);
    if (
      typeof at === 'string' &&
      !Number.isNaN(date.getTime()) &&
      date.toISOString() === at &&
      (kind === 'event' || kind === 'rejection') &&
      (LOGGED_WEBHOOK_PROVIDERS as readonly unknown[]).includes(provider) &&
      typeof key === 'string'
    ) {
      return { at: date, kind, provider: provider as string, key };
    }
  } catch {
    // fall through: a cursor we did not issue
  }
  throw new BadRequestError('cursor: Invalid cursor');
}

/**
 * The log of provider webhooks received (GET /api/integrations/events): the verified events with
 * their outcome (webhook_events), merged with the requests rejected before verification, counted
 * per reason (webhook_rejections). Each source is read in the log's order from its own index, one
 * page and one row more; the merge keeps the newest.
 */
export class WebhookLog {
  private readonly records: WebhookRecords;

  constructor(orm: MikroORM) {
    this.records = new WebhookRecords(orm);
  }

  /** A request refused before its body was verified: counted under its reason, nothing else kept. */
  async rejected(
    organizationId: string,
    provider: LoggedWebhookProvider,
    reason: string,
    at = new Date(),
  ): Promise<void> {
    const kept = reason.length > REASON_MAX ? `${reason.slice(0, REASON_MAX - 1)}…` : reason;
    await this.records.rememberRejection(organizationId, provider, kept, at);
  }

  async list(
    organizationId: string,
    query: {
      provider?: LoggedWebhookProvider | undefined;
      outcome?: ReceivedWebhookOutcome | undefined;
      cursor?: string | undefined;
      limit?: number | undefined;
    },
  ): Promise<{ webhook_events: ReceivedWebhookEvent[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const before = decodePosition(query.cursor);
    const events: Entry[] = [];
    const rejections: Entry[] = [];
    if (query.outcome !== 'rejected') {
      const outcome = query.outcome;
      for (const row of await this.records.eventsBefore(
        organizationId,
        { provider: query.provider, outcome },
        before,
        limit,
      )) {
        events.push({
          position: { at: row.received_at, kind: 'event', provider: row.provider, key: row.event_id },
          event: {
            provider: row.provider as LoggedWebhookProvider,
            outcome: row.outcome as ReceivedWebhookOutcome,
            event_id: row.event_id,
            event_type: row.event_type,
            detail: row.detail ?? null,
            requests: 1,
            first_received_at: iso(row.received_at),
            received_at: iso(row.received_at),
          },
        });
      }
    }
    if (query.outcome === undefined || query.outcome === 'rejected') {
      for (const row of await this.records.rejectionsBefore(organizationId, query.provider, before, limit)) {
        rejections.push({
          position: { at: row.last_received_at, kind: 'rejection', provider: row.provider, key: row.reason },
          event: {
            provider: row.provider as LoggedWebhookProvider,
            outcome: 'rejected',
            event_id: null,
            event_type: null,
            detail: row.reason,
            requests: Number(row.requests),
            first_received_at: iso(row.first_received_at),
            received_at: iso(row.last_received_at),
          },
        });
      }
    }
    const entries = merge(events, rejections);
    const page = entries.slice(0, limit);
    return {
      webhook_events: page.map((e) => e.event),
      next_cursor: entries.length > limit ? encodePosition(page[page.length - 1].position) : null,
    };
  }
}
