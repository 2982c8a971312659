import type { MikroORM } from '@mikro-orm/postgresql';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Job, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { poolOf } from '../../db/database.js';
import { Db } from '../../db/sql.js';
import { startQueue } from '../../jobs/queue.js';
import { SECRET_PURPOSE, type SecretBox } from '../../security/secret-box.js';
import { DELIVERY_DEFAULTS, RETRY_DELAYS_MS } from './delivery-settings.js';
import { expandBatches, load, relay, relayOrganizations, succeeded } from './delivery-statements.js';
import { EndpointSlots } from './endpoint-slots.js';
import { eventBody } from './payloads.js';
import { WebhookPoster, isSuccess, type Outcome } from './poster.js';
import { startRetention } from './retention.js';
import { startClickRetention, type JobFailed } from '../clicks/click-retention.js';
import { SuccessBatch } from './success-batch.js';
import { Signers, signedHeaders, webhookIdOf } from './signing.js';
import { UrlGuard } from './url-guard.js';
import {
  DELIVERY_QUEUE,
  recordFailedAttempt,
  type DeliveryRow,
  type DueAttempt,
  type JobData,
} from './delivery-records.js';

export { DELIVERY_DEFAULTS, RETRY_DELAYS_MS } from './delivery-settings.js';
export { DELIVERY_QUEUE } from './delivery-records.js';

export interface DeliveryOptions {
  /** Per attempt, from connecting to the end of the answer's first 1 KB. */
  timeoutMs?: number;
  retryDelaysMs?: readonly number[];
  jitter?: number;
  disableAfterFailingMs?: number;
  relayIntervalMs?: number;
  relayGatherMs?: number;
  /** http:// and private addresses allowed (WEBHOOK_ALLOW_PRIVATE_URLS). */
  allowPrivateUrls?: boolean;
  /** How often pg-boss looks for the jobs of a crashed worker (seconds). */
  superviseIntervalSeconds?: number;
  batchSize?: number;
  workers?: number;
  maxInFlight?: number;
  maxPending?: number;
  /** Attempts in flight to one endpoint (EndpointSlots). */
  endpointConcurrency?: number;
  /** How long after the relay queued them the backstop job makes first attempts that were never recorded (a crash). */
  backstopAfterMs?: number;
  /** Events and their finished deliveries are deleted this many days after dispatch (0: kept). */
  retentionDays?: number;
  /** Told of a scheduled job's failed run (the click retention's), besides its error log: main.ts counts it in job_failures_total. */
  jobFailed?: JobFailed;
}

/**
 * Delivery of outbound events. Runs in the service process by default (main.ts), or on its own
 * (`npm run worker`, jobs/worker.ts); any number of either share the work through the database
 * (SKIP LOCKED).
 *
 * First attempts go straight from the relay to the receiver: one transaction turns outbox rows
 * into deliveries and answers what their attempts need (no second read), the attempts run at once
 * (at most `maxInFlight` together, over keep-alive connections), and their successes are recorded
 * together (one statement per batch). The same transaction queues one pg-boss job, the backstop,
 * due `backstopAfterMs` later, naming every delivery it took: when it runs, whatever was recorded
 * meanwhile is skipped, and a first attempt that a crash lost is made then. Retries are pg-boss
 * jobs, one per attempt, queued with the failure they follow. At least once: an attempt is
 * recorded after it is made, so a crash in between makes it again (same `webhook-id`).
 */
export class EventDelivery {
  private boss: PgBoss | undefined;
  private readonly db: Db;
  private readonly options: Required<Omit<DeliveryOptions, 'superviseIntervalSeconds' | 'jobFailed'>> &
    Pick<DeliveryOptions, 'superviseIntervalSeconds' | 'jobFailed'>;
  private readonly poster: WebhookPoster;
  private relayTimer: NodeJS.Timeout | undefined;
  private relaying: Promise<unknown> | undefined;
  private stopping = false;
  /** Set once a stop gave up waiting: answers arriving later are not recorded (the backstop makes those attempts again). */
  private cut = false;
  private readonly signers: Signers;
  /**
   * The pooled connections delivery holds at once (relay, delivery log, the queue's statements):
   * a third of the pool, at least one, so that requests keep the rest however much is queued.
   */
  private readonly connections: LimitFunction;
  /** The attempts in flight at once. */
  private readonly inFlight: LimitFunction;
  private readonly endpoints: EndpointSlots;
  /** Deliveries taken (by the relay or a job) and not yet recorded. */
  private pending = 0;
  private readonly underWay = new Set<string>();
  private idle: (() => void) | undefined;
  private readonly successes: SuccessBatch;

  constructor(
    private readonly orm: MikroORM,
    private readonly secrets: SecretBox,
    private readonly logger: Logger,
    options: DeliveryOptions = {},
  ) {
    this.db = Db.of(orm);
    this.connections = pLimit(Math.max(1, Math.floor((poolOf(orm).options.max ?? 10) / 3)));
    const timeoutMs = options.timeoutMs ?? DELIVERY_DEFAULTS.timeoutMs;
    this.options = {
      timeoutMs,
      retryDelaysMs: options.retryDelaysMs ?? RETRY_DELAYS_MS,
      jitter: options.jitter ?? DELIVERY_DEFAULTS.jitter,
      disableAfterFailingMs: options.disableAfterFailingMs ?? DELIVERY_DEFAULTS.disableAfterFailingMs,
      relayIntervalMs: options.relayIntervalMs ?? DELIVERY_DEFAULTS.relayIntervalMs,
      relayGatherMs: options.relayGatherMs ?? DELIVERY_DEFAULTS.relayGatherMs,
      allowPrivateUrls: options.allowPrivateUrls ?? false,
      superviseIntervalSeconds: options.superviseIntervalSeconds,
      batchSize: options.batchSize ?? DELIVERY_DEFAULTS.batchSize,
      workers: options.workers ?? DELIVERY_DEFAULTS.workers,
      maxInFlight: options.maxInFlight ?? DELIVERY_DEFAULTS.maxInFlight,
      maxPending: options.maxPending ?? DELIVERY_DEFAULTS.maxPending,
      endpointConcurrency: options.endpointConcurrency ?? DELIVERY_DEFAULTS.endpointConcurrency,
      // Long enough for every attempt taken to be made and recorded (queued behind maxPending, cut at the timeout).
      backstopAfterMs: options.backstopAfterMs ?? Math.max(30_000, 3 * timeoutMs),
      retentionDays: options.retentionDays ?? DELIVERY_DEFAULTS.retentionDays,
      jobFailed: options.jobFailed,
    };
    this.inFlight = pLimit(this.options.maxInFlight);
    this.endpoints = new EndpointSlots(this.options.endpointConcurrency);
    this.poster = new WebhookPoster(
      new UrlGuard(this.options.allowPrivateUrls),
      timeoutMs,
      this.options.endpointConcurrency,
    );
    this.successes = new SuccessBatch(
      (batch) =>
        this.connections(() =>
          this.db.rows(
            succeeded({
              ids: batch.map((o) => o.id),
              statuses: batch.map((o) => o.status),
              bodies: batch.map((o) => o.body),
              attempts: batch.map((o) => o.attempts),
              at: batch.map((o) => o.at),
            }),
          ),
        ),
      logger,
      { max: DELIVERY_DEFAULTS.recordBatch, afterMs: DELIVERY_DEFAULTS.recordAfterMs },
    );
    this.signers = new Signers((stored) => this.secrets.open(stored, SECRET_PURPOSE.webhookEndpoint));
  }

  async start(): Promise<void> {
    const boss = await startQueue(this.orm, this.logger, {
      superviseIntervalSeconds: this.options.superviseIntervalSeconds,
      connections: this.connections,
      schedule: true,
    });
    this.boss = boss;
    await boss.createQueue(DELIVERY_QUEUE, {
      // A job whose worker stops heart-beating (killed) is attempted again, soon: at least once.
      heartbeatSeconds: 10,
      expireInSeconds: Math.ceil(this.options.timeoutMs / 1000) * 3 + 30,
      // These retries are pg-boss's, for a handler that failed (the database unavailable); the
      // delivery's own schedule (RETRY_DELAYS_MS) is kept by the delivery log, one job per attempt.
      retryLimit: 100,
      retryDelay: 1,
      retryBackoff: true,
      retryDelayMax: 60,
      deleteAfterSeconds: 24 * 60 * 60,
    });
    for (let i = 0; i < this.options.workers; i++) {
      await boss.work<JobData>(
        DELIVERY_QUEUE,
        { batchSize: this.options.batchSize, pollingIntervalSeconds: 0.5 },
        (jobs) => this.attemptJobs(jobs),
      );
    }
    await startRetention(
      boss,
      (statement) => this.connections(() => this.db.rows(statement)),
      this.options.retentionDays,
      this.logger,
      this.options.jobFailed,
    );
    // The queue's other schedule: the organizations' click retention (docs/data-lifecycle.md).
    await startClickRetention(
      boss,
      (statement) => this.connections(() => this.db.rows(statement)),
      this.logger,
      this.options.jobFailed,
    );
    this.scheduleRelay(0);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.relayTimer);
    await this.relaying;
    // Attempts still in flight after 5 s are cut: the backstop (or their job, run again) makes them
    // again, so a stop never waits for a slow receiver past the service's own shutdown bound.
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref());
    const drained = this.pending === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.idle = resolve));
    await Promise.all([
      this.boss?.stop({ graceful: true, timeout: 5_000, close: false }),
      Promise.race([drained, deadline]),
    ]);
    this.cut = true;
    this.successes.drop();
    await this.poster.close();
  }

  private scheduleRelay(delayMs: number): void {
    if (this.stopping) return;
    this.relayTimer = setTimeout(() => {
      this.relaying = this.relayOnce()
        // A full batch: more is waiting, at once; some: gather a little more; none: wait.
        .then(({ taken, limit }) =>
          this.scheduleRelay(
            limit === 0
              ? this.options.relayGatherMs
              : taken >= limit
                ? 0
                : taken > 0
                  ? this.options.relayGatherMs
                  : this.options.relayIntervalMs,
          ),
        )
        .catch((err: unknown) => {
          this.logger.warn({ err }, 'outbound events: relay failed; trying again');
          this.scheduleRelay(1_000);
        });
    }, delayMs);
  }

  /** One relay pass: takes what the outbox holds (as much as this process has room for) and attempts it. */
  async relayOnce(): Promise<{ taken: number; limit: number }> {
    const limit = Math.max(0, Math.min(DELIVERY_DEFAULTS.relayBatch, this.options.maxPending - this.pending));
    if (limit === 0) return { taken: 0, limit };
    const rows = await this.connections(() => this.relay(limit));
    for (const row of rows) void this.deliver(row);
    return { taken: rows.length, limit };
  }

  /** One pass, organization by organization (each its own transaction: one shard's on Citus), up to `limit` deliveries. */
  private async relay(limit: number): Promise<DeliveryRow[]> {
    const organizations = await this.db.rows(relayOrganizations(limit));
    const taken: DeliveryRow[] = [];
    for (const { organization_id: organization } of organizations) {
      if (taken.length >= limit) break;
      taken.push(...(await this.relayOrganization(organization, limit - taken.length)));
    }
    return taken;
  }

  private async relayOrganization(organization: string, limit: number): Promise<DeliveryRow[]> {
    const boss = this.boss;
    if (!boss) throw new Error('EventDelivery not started');
    return this.db.transaction(async (db) => {
      await db.rows(expandBatches(limit, organization));
      const rows = await db.rows(relay(limit, organization));
      if (rows.length > 0) {
        const backstop: JobData = { attempts: rows.map((r) => ({ delivery_id: r.id, attempt: r.attempts })) };
        await boss.insert(
          DELIVERY_QUEUE,
          [{ data: backstop, startAfter: new Date(Date.now() + this.options.backstopAfterMs) }],
          { db: db.jobDatabase() },
        );
      }
      return rows;
    });
  }

  /** Retry and backstop jobs: their deliveries still pending at the expected attempt, attempted; the job ends once all are recorded. */
  private async attemptJobs(jobs: Job<JobData>[]): Promise<void> {
    const attempts = jobs.flatMap((job) => job.data.attempts);
    const rows = await this.connections(() => this.db.rows(load(attempts.map((a) => a.delivery_id))));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const due = attempts
      .map((attempt) => ({ attempt, row: byId.get(attempt.delivery_id) }))
      // Gone (the endpoint was deleted), or this attempt was made already (by the relay's process, or a job run again after a crash).
      .filter((x): x is { attempt: DueAttempt; row: DeliveryRow } => !!x.row && x.row.attempts === x.attempt.attempt)
      // Twice in the jobs (a manual retry next to a scheduled one): once.
      .filter((x, i, all) => all.findIndex((y) => y.row.id === x.row.id) === i);
    await Promise.all(due.map(({ row }) => this.deliver(row)));
  }

  /** One attempt, made within the in-flight bound, then recorded. Resolves once recorded (or given up on: logged). */
  private async deliver(row: DeliveryRow): Promise<void> {
    // Already under way here (its backstop came due while it waited behind a slow endpoint): once.
    if (this.underWay.has(row.id)) return;
    this.underWay.add(row.id);
    this.pending++;
    try {
      const { at, outcome } = await this.endpoints.run(row.endpoint_id, () =>
        this.inFlight(async () => {
          const at = new Date();
          try {
            return { at, outcome: await this.attempt(row) };
          } catch (err) {
            // One delivery that cannot be made (a payload that cannot be built) fails alone.
            this.logger.error({ err, deliveryId: row.id }, 'outbound events: attempt failed');
            return { at, outcome: { error: 'Internal error building the event' } };
          }
        }),
      );
      if (this.cut) return;
      if (isSuccess(outcome))
        await this.successes.record({
          id: row.id,
          attempts: row.attempts,
          at,
          status: outcome.status!,
          body: outcome.body ?? null,
        });
      else await this.recordFailure(row, at, outcome);
    } catch (err) {
      // Not recorded: the backstop or the job, run again, makes the attempt again (same webhook-id).
      this.logger.warn(
        { err, deliveryId: row.id },
        'outbound events: an attempt could not be recorded; it will be made again',
      );
    } finally {
      this.underWay.delete(row.id);
      this.pending--;
      if (this.pending === 0) this.idle?.();
    }
  }

  private attempt(row: DeliveryRow): Promise<Outcome> {
    if (!row.enabled) return Promise.resolve({ error: 'The endpoint is disabled' });
    let signers;
    try {
      signers = [this.signers.get(row.secret)];
      if (
        row.previous_secret &&
        row.previous_secret_expires_at &&
        new Date(row.previous_secret_expires_at) > new Date()
      ) {
        signers.push(this.signers.get(row.previous_secret));
      }
    } catch (err) {
      this.logger.error({ err, endpointId: row.endpoint_id }, 'outbound events: the endpoint secret cannot be read');
      return Promise.resolve({ error: 'The signing secret cannot be read (ENCRYPTION_KEY)' });
    }
    const body = eventBody(row.type, new Date(row.event_at), row.resource, row.livemode);
    const headers = signedHeaders(signers, webhookIdOf(row.event_id), new Date(), body);
    return this.poster.post(row.url, headers, body);
  }

  /** A failed attempt recorded, its retry queued and its endpoint's failure streak kept, in one transaction. */
  private recordFailure(row: DeliveryRow, at: Date, outcome: Outcome): Promise<void> {
    return this.connections(() =>
      recordFailedAttempt(
        {
          db: this.db,
          boss: this.boss!,
          retryDelaysMs: this.options.retryDelaysMs,
          jitter: this.options.jitter,
          disableAfterFailingMs: this.options.disableAfterFailingMs,
        },
        row,
        at,
        outcome,
      ),
    );
  }
}
