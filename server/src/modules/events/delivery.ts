import http from 'node:http';
import https from 'node:https';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { OutboundEventType } from '@affiliate-attribution/contract';
import pLimit, { type LimitFunction } from 'p-limit';
import type pg from 'pg';
import type { Job, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import { poolOf } from '../../db/database.js';
import { databaseOn, startQueue } from '../../jobs/queue.js';
import { SECRET_PURPOSE, type SecretBox } from '../../security/secret-box.js';
import { DELIVERY_DEFAULTS, RETRY_DELAYS_MS, jittered } from './delivery-settings.js';
import { ENDPOINT_FAILED, FAILED, LOAD, RELAY, SUCCEEDED } from './delivery-statements.js';
import { eventBody } from './payloads.js';
import { Signers, signedHeaders, webhookIdOf } from './signing.js';
import { UrlGuard, UrlRefusedError } from './url-guard.js';

/** The pg-boss queue of delivery attempts: each job is "attempt delivery d, its attempt n, now". */
export { DELIVERY_DEFAULTS, RETRY_DELAYS_MS } from './delivery-settings.js';

export const DELIVERY_QUEUE = 'webhook-delivery';


export interface DeliveryOptions {
  /** Per attempt, from connecting to the end of the answer's first 1 KB. */
  timeoutMs?: number;
  retryDelaysMs?: readonly number[];
  jitter?: number;
  disableAfterFailingMs?: number;
  relayIntervalMs?: number;
  /** http:// and private addresses allowed (WEBHOOK_ALLOW_PRIVATE_URLS). */
  allowPrivateUrls?: boolean;
  /** How often pg-boss looks for the jobs of a crashed worker (seconds). */
  superviseIntervalSeconds?: number;
  batchSize?: number;
  workers?: number;
}

/** One attempt of a delivery: `attempt` is its attempts when queued, so an attempt made already is not made again. */
interface DueAttempt {
  delivery_id: string;
  attempt: number;
}

/**
 * A job: the first attempts of up to JOB_DELIVERIES deliveries the relay created together, or one
 * retry. Grouping first attempts keeps the queue's own writes (insert, fetch, complete) to a few
 * rows per hundred deliveries instead of three per delivery.
 */
interface JobData {
  attempts: DueAttempt[];
}

const JOB_DELIVERIES = 50;

interface DeliveryRow {
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
}

interface Outcome {
  status?: number;
  body?: string;
  error?: string;
}

/**
 * Delivery of outbound events: the relay (outbox to deliveries and queued jobs) and the pg-boss
 * workers that attempt them. Runs in the service process by default (main.ts), or on its own
 * (`npm run worker`, jobs/worker.ts); any number of either share the work through the database
 * (SKIP LOCKED). At least once: an attempt is recorded after it is made, so a crash in between
 * makes it again (same `webhook-id`).
 */
export class EventDelivery {
  private boss: PgBoss | undefined;
  private readonly pool: pg.Pool;
  private readonly urls: UrlGuard;
  private readonly options: Required<Omit<DeliveryOptions, 'superviseIntervalSeconds'>> & Pick<DeliveryOptions, 'superviseIntervalSeconds'>;
  private readonly agents: { http: http.Agent; https: https.Agent };
  private relayTimer: NodeJS.Timeout | undefined;
  private relaying: Promise<void> | undefined;
  private stopping = false;
  private readonly workerIds: string[] = [];
  private readonly signers: Signers;
  /**
   * The pooled connections delivery holds at once (relay, delivery log, the queue's statements):
   * a third of the pool, at least one, so that requests keep the rest however much is queued.
   */
  private readonly connections: LimitFunction;

  constructor(
    private readonly orm: MikroORM,
    private readonly secrets: SecretBox,
    private readonly logger: Logger,
    options: DeliveryOptions = {},
  ) {
    this.pool = poolOf(orm);
    this.connections = pLimit(Math.max(1, Math.floor((this.pool.options.max ?? 10) / 3)));
    this.options = {
      timeoutMs: options.timeoutMs ?? DELIVERY_DEFAULTS.timeoutMs,
      retryDelaysMs: options.retryDelaysMs ?? RETRY_DELAYS_MS,
      jitter: options.jitter ?? DELIVERY_DEFAULTS.jitter,
      disableAfterFailingMs: options.disableAfterFailingMs ?? DELIVERY_DEFAULTS.disableAfterFailingMs,
      relayIntervalMs: options.relayIntervalMs ?? DELIVERY_DEFAULTS.relayIntervalMs,
      allowPrivateUrls: options.allowPrivateUrls ?? false,
      superviseIntervalSeconds: options.superviseIntervalSeconds,
      batchSize: options.batchSize ?? DELIVERY_DEFAULTS.batchSize,
      workers: options.workers ?? DELIVERY_DEFAULTS.workers,
    };
    this.urls = new UrlGuard(this.options.allowPrivateUrls);
    this.signers = new Signers((stored) => this.secrets.open(stored, SECRET_PURPOSE.webhookEndpoint));
    // Keep-alive: a busy endpoint gets its events over a few reused connections. The socket's
    // lookup (UrlGuard.lookup) checks the addresses of every new connection.
    this.agents = { http: new http.Agent({ keepAlive: true, maxSockets: 32 }), https: new https.Agent({ keepAlive: true, maxSockets: 32 }) };
  }

  async start(): Promise<void> {
    const boss = await startQueue(this.orm, this.logger, { superviseIntervalSeconds: this.options.superviseIntervalSeconds, connections: this.connections });
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
    // Separate workers (not localConcurrency), so that the relay can wake each one by id as soon as
    // it has queued something, instead of letting them wait out their poll.
    for (let i = 0; i < this.options.workers; i++) {
      this.workerIds.push(
        await boss.work<JobData>(DELIVERY_QUEUE, { batchSize: this.options.batchSize, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true }, (jobs) => this.attemptJobs(jobs)),
      );
    }
    this.scheduleRelay(0);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.relayTimer);
    await this.relaying;
    // Attempts still in flight after 5 s are cut: their jobs come back to another worker (at least
    // once), so a stop never waits for a slow receiver past the service's own shutdown bound.
    await this.boss?.stop({ graceful: true, timeout: 5_000, close: false });
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private scheduleRelay(delayMs: number): void {
    if (this.stopping) return;
    this.relayTimer = setTimeout(() => {
      this.relaying = this.relayOnce()
        // Something moved: look again at once (more may have committed meanwhile); nothing: wait.
        .then((moved) => this.scheduleRelay(moved > 0 ? 0 : this.options.relayIntervalMs))
        .catch((err: unknown) => {
          this.logger.warn({ err }, 'outbound events: relay failed; trying again');
          this.scheduleRelay(1_000);
        });
    }, delayMs);
  }

  /** One relay pass; answers how many deliveries it queued. */
  relayOnce(): Promise<number> {
    return this.connections(() => this.relay());
  }

  private async relay(): Promise<number> {
    const boss = this.boss;
    if (!boss) throw new Error('EventDelivery not started');
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('begin');
      try {
        const { rows } = await client.query<{ id: string; attempts: number }>(RELAY, [DELIVERY_DEFAULTS.relayBatch]);
        if (rows.length > 0) {
          const jobs: { data: JobData }[] = [];
          for (let i = 0; i < rows.length; i += JOB_DELIVERIES) {
            jobs.push({ data: { attempts: rows.slice(i, i + JOB_DELIVERIES).map((r) => ({ delivery_id: r.id, attempt: r.attempts })) } });
          }
          await boss.insert(DELIVERY_QUEUE, jobs, { db: databaseOn(client) });
        }
        await client.query('commit');
        if (rows.length > 0) for (const id of this.workerIds) boss.notifyWorker(id);
        return rows.length;
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

  /** A batch of jobs: each delivery attempted (concurrently), the outcomes recorded. */
  private async attemptJobs(jobs: Job<JobData>[]): Promise<void> {
    const attempts = jobs.flatMap((job) => job.data.attempts);
    const { rows } = await this.connections(() => this.pool.query<DeliveryRow>(LOAD, [attempts.map((a) => a.delivery_id)]));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const due = attempts
      .map((attempt) => ({ attempt, row: byId.get(attempt.delivery_id) }))
      // Gone (the endpoint was deleted), or this attempt was made already (a job run again after a crash).
      .filter((x): x is { attempt: DueAttempt; row: DeliveryRow } => !!x.row && x.row.status === 'pending' && x.row.attempts === x.attempt.attempt)
      // Twice in the jobs (a manual retry next to a scheduled one): once.
      .filter((x, i, all) => all.findIndex((y) => y.row.id === x.row.id) === i);
    const outcomes = await Promise.all(
      due.map(async ({ row }) => {
        const at = new Date();
        try {
          return { row, at, outcome: await this.attempt(row) };
        } catch (err) {
          // One delivery that cannot be made (a payload that cannot be built) fails alone, never its batch.
          this.logger.error({ err, deliveryId: row.id }, 'outbound events: attempt failed');
          return { row, at, outcome: { error: 'Internal error building the event' } };
        }
      }),
    );
    const succeeded = outcomes.filter((o) => isSuccess(o.outcome));
    if (succeeded.length > 0) {
      await this.connections(() =>
        this.pool.query(SUCCEEDED, [
          succeeded.map((o) => o.row.id),
          succeeded.map((o) => o.outcome.status),
          succeeded.map((o) => o.outcome.body ?? null),
          succeeded.map((o) => o.row.attempts),
          succeeded.map((o) => o.at),
        ]),
      );
    }
    for (const failed of outcomes.filter((o) => !isSuccess(o.outcome))) await this.recordFailure(failed.row, failed.at, failed.outcome);
  }

  private async attempt(row: DeliveryRow): Promise<Outcome> {
    if (!row.enabled) return { error: 'The endpoint is disabled' };
    let signers;
    try {
      signers = [this.signers.get(row.secret)];
      if (row.previous_secret && row.previous_secret_expires_at && new Date(row.previous_secret_expires_at) > new Date()) {
        signers.push(this.signers.get(row.previous_secret));
      }
    } catch (err) {
      this.logger.error({ err, endpointId: row.endpoint_id }, 'outbound events: the endpoint secret cannot be read');
      return { error: 'The signing secret cannot be read (ENCRYPTION_KEY)' };
    }
    const body = eventBody(row.type, new Date(row.event_at), row.resource);
    const headers = signedHeaders(signers, webhookIdOf(row.event_id), new Date(), body);
    return this.post(row.url, headers, body);
  }

  /** One POST: no redirect followed, cut at the timeout, the answer's body kept up to 1 KB. */
  private post(url: string, signed: Record<string, string>, body: string): Promise<Outcome> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.resolve({ error: 'Invalid url' });
    }
    const refused = this.urls.literalProblem(target);
    if (refused) return Promise.resolve({ error: `Address not allowed: ${refused}` });
    const isHttps = target.protocol === 'https:';
    const timeoutMs = this.options.timeoutMs;
    return new Promise<Outcome>((resolve) => {
      let settled = false;
      const settle = (outcome: Outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const request = (isHttps ? https : http).request(
        target,
        {
          method: 'POST',
          agent: isHttps ? this.agents.https : this.agents.http,
          lookup: this.urls.lookup,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': 'affiliate-attribution-webhooks/1',
            ...signed,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const finish = () => {
            const text = Buffer.concat(chunks).subarray(0, DELIVERY_DEFAULTS.responseBodyBytes).toString('utf8').replace(/\u0000/g, '');
            settle({ status: response.statusCode, body: text });
          };
          response.on('data', (chunk: Buffer) => {
            if (size >= DELIVERY_DEFAULTS.responseBodyBytes) return;
            chunks.push(chunk);
            size += chunk.length;
            if (size >= DELIVERY_DEFAULTS.responseBodyBytes) {
              finish();
              response.destroy();
            }
          });
          response.on('end', finish);
          response.on('error', () => finish());
        },
      );
      const timer = setTimeout(() => {
        settle({ error: `Timed out after ${timeoutMs / 1000} s` });
        request.destroy();
      }, timeoutMs);
      request.on('error', (err) => settle({ error: err instanceof UrlRefusedError ? `Address not allowed: ${err.message}` : `Connection failed: ${describe(err)}` }));
      request.end(body);
    });
  }

  /** A failed attempt recorded, its retry queued and its endpoint's failure streak kept, in one transaction. */
  private recordFailure(row: DeliveryRow, at: Date, outcome: Outcome): Promise<void> {
    return this.connections(() => this.recordFailureNow(row, at, outcome));
  }

  private async recordFailureNow(row: DeliveryRow, at: Date, outcome: Outcome): Promise<void> {
    if (!row.enabled) {
      // Not attempted: the log keeps the last real attempt's answer, and says why it stops.
      await this.pool.query(`update webhook_deliveries set status = 'failed', next_attempt_at = null, last_error = $3 where id = $1 and attempts = $2`, [
        row.id,
        row.attempts,
        outcome.error ?? 'The endpoint is disabled',
      ]);
      return;
    }
    const boss = this.boss!;
    const gone = outcome.status === 410;
    const delays = this.options.retryDelaysMs;
    const final = !row.enabled || gone || row.attempts >= delays.length;
    const nextAt = final ? null : new Date(at.getTime() + jittered(delays[row.attempts]!, this.options.jitter));
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('begin');
      try {
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
            await boss.send(DELIVERY_QUEUE, retry, { startAfter: nextAt, db: databaseOn(client) });
          }
          if (row.enabled) await client.query(ENDPOINT_FAILED, [row.endpoint_id, at, gone, this.options.disableAfterFailingMs]);
        }
        await client.query('commit');
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
}

const isSuccess = (outcome: Outcome): boolean => outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;


function describe(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? String(err);
}
