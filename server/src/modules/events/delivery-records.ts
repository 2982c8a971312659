import type { OutboundEventType } from '@affiliate-attribution/contract';
import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../../db/sql.js';
import { jittered } from './delivery-settings.js';
import { endpointFailed, failed } from './delivery-statements.js';
import type { Outcome } from './poster.js';

// The outbound events' delivery records (delivery.ts runs the delivery): the shapes of its rows and
// jobs, its transactions, and what a failed attempt writes.

/** The pg-boss queue of delivery attempts: each job is "attempt these deliveries (at their attempt n), now". */
export const DELIVERY_QUEUE = 'webhook-delivery';

/** One attempt of a delivery: `attempt` is its attempts when queued, so an attempt made already is not made again. */
export interface DueAttempt {
  delivery_id: string;
  attempt: number;
}

/**
 * A job: deliveries to attempt, each at its expected attempt number. A retry is a job of one,
 * queued with its due time; a relay pass queues one job for all it took (the backstop: delivery.ts).
 */
export interface JobData {
  attempts: DueAttempt[];
}

/** A delivery with what its attempt needs: the event, the endpoint and its secrets (delivery-statements.ts RELAY and LOAD). */
export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  status: string;
  type: OutboundEventType;
  resource: Record<string, unknown>;
  event_at: Date;
  url: string;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  /** The event's organization's mode: false for test data. */
  livemode: boolean;
}

/** What recording a failed attempt needs from the delivery: its database handle, its queue and its retry settings. */
export interface FailureRecording {
  db: Db;
  boss: PgBoss;
  retryDelaysMs: readonly number[];
  jitter: number;
  disableAfterFailingMs: number;
}

/**
 * A failed attempt recorded, its retry queued (pg-boss, in the same transaction) and its endpoint's
 * failure streak kept; an attempt not made because the endpoint is disabled is recorded as the
 * delivery's end.
 */
export async function recordFailedAttempt(
  to: FailureRecording,
  row: DeliveryRow,
  at: Date,
  outcome: Outcome,
): Promise<void> {
  if (!row.enabled) {
    // Not attempted: the log keeps the last real attempt's answer, and says why it stops.
    await to.db.rows(
      sql`update webhook_deliveries set status = 'failed', next_attempt_at = null, last_error = ${outcome.error ?? 'The endpoint is disabled'} where id = ${row.id} and attempts = ${row.attempts}`,
    );
    return;
  }
  const gone = outcome.status === 410;
  const delays = to.retryDelaysMs;
  const final = !row.enabled || gone || row.attempts >= delays.length;
  const nextAt = final ? null : new Date(at.getTime() + jittered(delays[row.attempts], to.jitter));
  await to.db.transaction(async (db) => {
    const rows = await db.rows(
      failed({
        id: row.id,
        status: final ? 'failed' : 'pending',
        responseStatus: outcome.status ?? null,
        body: outcome.body ?? null,
        error: outcome.status === undefined ? (outcome.error ?? null) : null,
        at,
        nextAt,
        attempts: row.attempts,
      }),
    );
    if (rows.length > 0) {
      if (nextAt) {
        const retry: JobData = { attempts: [{ delivery_id: row.id, attempt: row.attempts + 1 }] };
        await to.boss.send(DELIVERY_QUEUE, retry, { startAfter: nextAt, db: db.jobDatabase() });
      }
      if (row.enabled) await db.rows(endpointFailed(row.endpoint_id, at, gone, to.disableAfterFailingMs));
    }
  });
}
