import type { OutboundEventType } from '@affiliate-attribution/contract';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { databaseOn } from '../../jobs/queue.js';
import { jittered } from './delivery-settings.js';
import { ENDPOINT_FAILED, FAILED } from './delivery-statements.js';
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

/** `work` in one transaction on one pooled connection (a connection whose rollback failed is discarded). */
export async function transactionOn<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('begin');
    try {
      const result = await work(client);
      await client.query('commit');
      return result;
    } catch (err) {
      await client.query('rollback').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw err;
    }
  } finally {
    client.release(broken);
  }
}

/** What recording a failed attempt needs from the delivery: its pool, its queue and its retry settings. */
export interface FailureRecording {
  pool: pg.Pool;
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
    await to.pool.query(
      `update webhook_deliveries set status = 'failed', next_attempt_at = null, last_error = $3 where id = $1 and attempts = $2`,
      [row.id, row.attempts, outcome.error ?? 'The endpoint is disabled'],
    );
    return;
  }
  const gone = outcome.status === 410;
  const delays = to.retryDelaysMs;
  const final = !row.enabled || gone || row.attempts >= delays.length;
  const nextAt = final ? null : new Date(at.getTime() + jittered(delays[row.attempts], to.jitter));
  await transactionOn(to.pool, async (client) => {
    const { rows } = await client.query(FAILED, [
      row.id,
      final ? 'failed' : 'pending',
      outcome.status ?? null,
      outcome.body ?? null,
      outcome.status === undefined ? (outcome.error ?? null) : null,
      at,
      nextAt,
      row.attempts,
    ]);
    if (rows.length > 0) {
      if (nextAt) {
        const retry: JobData = { attempts: [{ delivery_id: row.id, attempt: row.attempts + 1 }] };
        await to.boss.send(DELIVERY_QUEUE, retry, { startAfter: nextAt, db: databaseOn(client) });
      }
      if (row.enabled)
        await client.query(ENDPOINT_FAILED, [
          row.endpoint_id,
          at,
          gone,
          new Date(at.getTime() - to.disableAfterFailingMs),
        ]);
    }
  });
}
