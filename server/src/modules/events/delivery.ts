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
import { eventBody } from './payloads.js';
import { Signers, signedHeaders, webhookIdOf } from './signing.js';
import { UrlGuard, UrlRefusedError } from './url-guard.js';

/** The pg-boss queue of delivery attempts: each job is "attempt delivery d, its attempt n, now". */
export const DELIVERY_QUEUE = 'webhook-delivery';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The waits before each retry: 5 s, 5 min, 30 min, 2 h, 5 h, then 10 h seven times, each ±20 %
 * (jitter, so that an endpoint back from an outage is not hit by every retry at once): 13 attempts
 * over about 3 days (77.6 h at the nominal delays; the first retry within 4 to 6 s).
 */
export const RETRY_DELAYS_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, ...Array<number>(7).fill(10 * HOUR)];

export const DELIVERY_DEFAULTS = {
  timeoutMs: 10 * SECOND,
  jitter: 0.2,
  /** An endpoint whose deliveries have all failed for this long is disabled. */
  disableAfterFailingMs: 3 * 24 * HOUR,
  /** How often the relay looks for new outbox rows when it found none. */
  relayIntervalMs: 200,
  relayBatch: 1000,
  /** Jobs per fetch (each up to JOB_DELIVERIES first attempts). */
  batchSize: 4,
  workers: 4,
  responseBodyBytes: 1024,
} as const;

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
 * Moves outbox rows into deliveries, one per enabled endpoint subscribed to the event, and queues
 * their first attempt, in one transaction (a crash before commit leaves the rows for the next
 * pass); also queues the deliveries a merchant asked to retry.
 */
const RELAY = `with ev as (
  select id, organization_id, type from outbound_events
  where dispatched_at is null order by created_at, id limit $1 for update skip locked
), marked as (
  update outbound_events o set dispatched_at = now() from ev where o.id = ev.id
), fresh as (
  insert into webhook_deliveries (id, organization_id, endpoint_id, event_id, next_attempt_at, created_at)
  select gen_random_uuid(), ev.organization_id, e.id, ev.id, now(), now()
  from ev join webhook_endpoints e on e.organization_id = ev.organization_id and e.enabled and ev.type = any (e.events)
  on conflict on constraint webhook_deliveries_once do nothing
  returning id, attempts
), again as (
  update webhook_deliveries d set requeue = false
  where d.id in (select id from webhook_deliveries where requeue order by created_at limit $1 for update skip locked)
  returning d.id, d.attempts
)
select id, attempts from fresh union all select id, attempts from again`;

const LOAD = `select d.id, d.endpoint_id, d.event_id, d.attempts, d.status, ev.type, ev.resource, ev.created_at as event_at,
  e.url, e.enabled, e.secret, e.previous_secret, e.previous_secret_expires_at
from webhook_deliveries d
join outbound_events ev on ev.id = d.event_id
join webhook_endpoints e on e.id = d.endpoint_id
where d.id = any ($1::uuid[])`;

/** Successful attempts of a batch, in one statement: the deliveries, and their endpoints no longer failing. */
const SUCCEEDED = `with done as (
  update webhook_deliveries d set status = 'succeeded', attempts = d.attempts + 1, last_response_status = u.status,
    last_response_body = u.body, last_error = null, last_attempt_at = u.at, next_attempt_at = null
  from unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::timestamptz[]) as u (id, status, body, attempts, at)
  where d.id = u.id and d.attempts = u.attempts
  returning d.endpoint_id
)
update webhook_endpoints set failing_since = null where id in (select endpoint_id from done) and failing_since is not null`;

const FAILED = `update webhook_deliveries set status = $2, attempts = attempts + 1, last_response_status = $3, last_response_body = $4,
  last_error = $5, last_attempt_at = $6, next_attempt_at = $7
where id = $1 and attempts = $8 returning attempts`;

/** A failed attempt's endpoint: failing since its first failure; disabled by a 410, or after failing for `$4` ms. */
const ENDPOINT_FAILED = `update webhook_endpoints set
  failing_since = coalesce(failing_since, $2),
  disabled_reason = case
    when not enabled then disabled_reason
    when $3 then 'The endpoint answered 410 Gone'
    when coalesce(failing_since, $2) <= $2 - $4 * interval '1 millisecond' then 'Every delivery failed for 3 days'
    else disabled_reason end,
  enabled = enabled and not $3 and coalesce(failing_since, $2) > $2 - $4 * interval '1 millisecond',
  updated_at = case when enabled and ($3 or coalesce(failing_since, $2) <= $2 - $4 * interval '1 millisecond') then now() else updated_at end
where id = $1`;

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

function jittered(delayMs: number, jitter: number): number {
  return Math.round(delayMs * (1 + jitter * (2 * Math.random() - 1)));
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? String(err);
}
