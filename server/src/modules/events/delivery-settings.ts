/** Delivery's settings (delivery.ts): its defaults, and when a failed delivery is tried again. */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The waits before each retry: 5 s, 5 min, 30 min, 2 h, 5 h, then 10 h seven times, each ±20 %
 * (jitter, so that an endpoint back from an outage is not hit by every retry at once): 13 attempts
 * over about 3 days (77.6 h at the nominal delays; the first retry within 4 to 6 s).
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  ...Array<number>(7).fill(10 * HOUR),
];

/** A delay spread by ±`jitter` (a fraction). */
export function jittered(delayMs: number, jitter: number): number {
  return Math.round(delayMs * (1 + jitter * (2 * Math.random() - 1)));
}

export const DELIVERY_DEFAULTS = {
  timeoutMs: 10 * SECOND,
  jitter: 0.2,
  /** An endpoint whose deliveries have all failed for this long is disabled. */
  disableAfterFailingMs: 3 * 24 * HOUR,
  /** How often the relay looks for new outbox rows when it found none. */
  relayIntervalMs: 200,
  /**
   * After a pass that found rows but not a full batch, the relay waits this long before the next
   * one, so that under a steady load it takes tens of rows per transaction instead of one or two.
   */
  relayGatherMs: 25,
  relayBatch: 500,
  /** Attempts in flight at once, per process (every endpoint together). */
  maxInFlight: 64,
  /** Deliveries taken by this process and not yet recorded: the relay takes no more beyond it. */
  maxPending: 1000,
  /** Attempts in flight to one endpoint (and connections kept open to it: keep-alive). */
  endpointConcurrency: 32,
  /** Successful attempts are recorded together, at most this long after the first of them. */
  recordAfterMs: 20,
  recordBatch: 500,
  /** Retry jobs per fetch, per worker. */
  batchSize: 25,
  workers: 2,
  responseBodyBytes: 1024,
  retentionDays: 30,
} as const;
