import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from './sql.js';

/**
 * Cache invalidation across instances with PostgreSQL's LISTEN/NOTIFY.
 *
 * Every instance caches program rules (attribution/cache.ts) and API keys
 * (http/authentication.ts). A write that changes one of them sends a notification on
 * CACHE_CHANGES_CHANNEL in its own transaction (notifyChange), which PostgreSQL delivers on commit
 * and never for a rolled-back write; each instance's ChangeListener, on a dedicated connection,
 * drops its cached entry as soon as the notification arrives. The TTLs of the caches stay as the
 * safety net for notifications lost while a listener was disconnected: on every (re)connect the
 * listener drops everything it caches, and in between the TTLs bound how long an entry can live.
 */

/** The one channel every instance LISTENs on (an identifier: no quoting needed). */
export const CACHE_CHANGES_CHANNEL = 'aa_cache_changes';

/** `application_name` of the listener's connection: how an operator finds it in pg_stat_activity. */
export const CHANGE_LISTENER_APPLICATION_NAME = 'affiliate-attribution cache listener';

/**
 * What changed: a program (its rule is cached by id), an affiliate (its status, by id), an
 * affiliate's links (its slug and aliases, cached by slug: changed only when the partner is erased),
 * an API key (cached by its SHA-256), or an organization's rows deleted in bulk (a test-data reset,
 * an organization's deletion, an import's undo): every slug, click and customer cached under the
 * organization is dropped, so that one re-created with the same slug or id is read afresh.
 */
export type CacheChange =
  | { kind: 'program'; id: string }
  | { kind: 'affiliate'; id: string }
  | { kind: 'affiliate_links'; id: string }
  | { kind: 'organization_rows'; id: string }
  | { kind: 'api_key'; keyHash: string };

/** The notification of one change, as a statement (kysely's `sql`). */
export const changeNotification = (change: CacheChange) =>
  sql`select pg_notify(${CACHE_CHANGES_CHANNEL}, ${JSON.stringify(change)})`;

/**
 * Sends `change` to every listening instance, the sender's included. Inside a transaction it is
 * delivered when that transaction commits (never if it rolls back); outside one, at once.
 */
export async function notifyChange(db: Db, change: CacheChange): Promise<void> {
  await db.rows(changeNotification(change));
}

/**
 * Sends every change in one statement of the caller's transaction (delivered on commit, like
 * notifyChange): a deletion may drop thousands of entries, and a round trip each would outlast the
 * statement timeout.
 */
export async function notifyChanges(db: Db, changes: CacheChange[]): Promise<void> {
  if (changes.length === 0) return;
  const payloads = changes.map((c) => JSON.stringify(c));
  await db.rows(
    sql`select count(pg_notify(${CACHE_CHANGES_CHANNEL}, payload)) from unnest(${payloads}::text[]) payload`,
  );
}

/** A notification's payload as a change, or undefined when it is not one this version sends. */
export function parseChange(payload: string | undefined): CacheChange | undefined {
  try {
    const value: unknown = JSON.parse(payload ?? '');
    if (typeof value !== 'object' || value === null) return undefined;
    const { kind, id, keyHash } = value as Record<string, unknown>;
    if (
      (kind === 'program' || kind === 'affiliate' || kind === 'affiliate_links' || kind === 'organization_rows') &&
      typeof id === 'string'
    )
      return { kind, id };
    if (kind === 'api_key' && typeof keyHash === 'string') return { kind, keyHash };
  } catch {
    // not JSON: ignored below
  }
  return undefined;
}

/** What the listener drives: the caches of one instance (services.ts, createServices). */
export interface CacheChangeHandler {
  /** One cached entry changed somewhere: drop it. */
  changed: (change: CacheChange) => void;
  /** Notifications may have been missed (the listener has just (re)connected): drop everything. */
  reset(): void;
}

export interface ChangeListenerOptions {
  /** A session connection (LISTEN is session state): direct, or through PgBouncer in session mode. */
  connectionString: string;
  handler: CacheChangeHandler;
  logger: Logger;
  /** Longest wait to open the connection, and for the answer to LISTEN or a heartbeat. */
  connectTimeoutMs?: number | undefined;
  /** Reconnection delays: doubling from initialMs up to maxMs, with jitter. */
  retry?: { initialMs: number; maxMs: number };
  /**
   * A heartbeat (`select pg_backend_pid()`) this often, so that a connection that died silently
   * (no RST) is noticed, and one pooled per transaction too.
   */
  heartbeatMs?: number;
  /**
   * Sends `payload` on CACHE_CHANGES_CHANNEL from another connection than the listener's: the
   * service's pool, as a write's notifyChange would (app.ts). With it, every heartbeat also sends a
   * probe, and a probe that has not arrived by the next heartbeat means notifications do not reach
   * this listener (PgBouncer in transaction mode hands them to whichever client holds the server
   * process then). Without it only the server-process check runs, which can miss a pooler for as
   * long as the pooler keeps handing the same process back.
   */
  sendProbe?: ((payload: string) => Promise<void>) | undefined;
}

const DEFAULTS = { connectTimeoutMs: 3_000, retry: { initialMs: 100, maxMs: 5_000 }, heartbeatMs: 10_000 } as const;

/** `kind` of a listener's probe: a notification every instance receives and only its sender counts. */
const PROBE_KIND = 'listener_probe';

/** The probe's id when `payload` is a probe (of any instance), else undefined. */
function probeIdOf(payload: string | undefined): string | undefined {
  if (!payload?.includes(PROBE_KIND)) return undefined;
  try {
    const { kind, probe } = JSON.parse(payload) as Record<string, unknown>;
    return kind === PROBE_KIND && typeof probe === 'string' ? probe : undefined;
  } catch {
    return undefined;
  }
}

/** A probe in flight: `sent` once its statement committed, `arrived` once this listener received it. */
interface Probe {
  id: string;
  sent: boolean;
  arrived: boolean;
}

/** The PostgreSQL server process answering on this connection. */
async function backendOf(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  return rows[0].pid;
}

/**
 * LISTENs on CACHE_CHANGES_CHANNEL on one dedicated `pg.Client` (not a pooled connection: a pool
 * hands connections out and LISTEN would stay on whichever it was). When the connection drops
 * (PostgreSQL restarted, the backend terminated, a heartbeat unanswered) it reconnects with
 * backoff, and after every successful LISTEN it resets the caches, since whatever was notified
 * while it was away is lost.
 */
export class ChangeListener {
  private readonly options: Required<Omit<ChangeListenerOptions, 'sendProbe'>> &
    Pick<ChangeListenerOptions, 'sendProbe'>;
  private client: pg.Client | undefined;
  private closed = false;
  /** Failed attempts since the last successful LISTEN (the backoff's exponent). */
  private failures = 0;
  private connections = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private warnedPooled = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** The last probe sent on the current connection (see ChangeListenerOptions.sendProbe). */
  private probe: Probe | undefined;
  private heartbeatInFlight = false;

  constructor(options: ChangeListenerOptions) {
    this.options = {
      ...options,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      retry: options.retry ?? DEFAULTS.retry,
      heartbeatMs: options.heartbeatMs ?? DEFAULTS.heartbeatMs,
    };
  }

  /** True while LISTEN is in effect on a live connection. */
  get listening(): boolean {
    return this.client !== undefined && this.heartbeatTimer !== undefined;
  }

  /**
   * Connects and LISTENs. Resolves once listening, or after the first attempt failed (logged; the
   * attempts go on in the background, and the TTLs bound every cached entry meanwhile).
   */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Stops listening and reconnecting (shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    // Bounded: a connection that stopped answering is not waited for.
    const giveUp = new Promise<void>((resolve) => setTimeout(resolve, this.options.connectTimeoutMs).unref());
    await Promise.race([client.end().catch(() => undefined), giveUp]);
  }

  private async connect(): Promise<void> {
    this.retryTimer = undefined;
    if (this.closed) return;
    const { connectionString, connectTimeoutMs, handler, logger } = this.options;
    const client = new pg.Client({
      connectionString,
      application_name: CHANGE_LISTENER_APPLICATION_NAME,
      connectionTimeoutMillis: connectTimeoutMs,
      query_timeout: connectTimeoutMs,
      keepAlive: true,
    });
    this.client = client;
    // Kept for the client's whole life: an 'error' without a listener would crash the process.
    client.on('error', (err) => logger.warn({ err }, 'cache change listener: connection error'));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.channel !== CACHE_CHANGES_CHANNEL) return;
      const probeId = probeIdOf(message.payload);
      if (probeId !== undefined) {
        if (this.client === client && this.probe?.id === probeId) this.probe.arrived = true;
        return;
      }
      const change = parseChange(message.payload);
      if (change) handler.changed(change);
      else logger.warn({ payload: message.payload }, 'cache change listener: unknown notification ignored');
    });
    let backend: number;
    try {
      await client.connect();
      await client.query(`listen ${CACHE_CHANGES_CHANNEL}`);
      backend = await backendOf(client);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.closed || this.client !== client) {
      await client.end().catch(() => undefined);
      return;
    }
    // Listening from here on: what changed before now may have been missed, so forget it all.
    handler.reset();
    // The heartbeat asks which server process answers: another one than the one that ran LISTEN
    // means a transaction pooler sits in between (PgBouncer in transaction mode), and notifications
    // go to whichever client holds that process then, never reliably here. Under light load the
    // pooler may hand the same process back, which the probe (sendProbe) catches: a notification
    // sent from the service's pool at one heartbeat must have arrived by the next. The heartbeat's
    // answer comes on the same socket after any notification the server sent before it, so a probe
    // that committed before this heartbeat began has either arrived or never will.
    this.probe = undefined;
    this.heartbeatTimer = setInterval(() => this.heartbeat(client, backend), this.options.heartbeatMs).unref();
    this.connections++;
    const retried = this.failures;
    this.failures = 0;
    if (this.connections === 1 && retried === 0)
      logger.info({ channel: CACHE_CHANGES_CHANNEL }, 'cache change listener: listening');
    else
      logger.warn(
        { channel: CACHE_CHANGES_CHANNEL, attempts: retried + 1 },
        'cache change listener: reconnected; every cached program rule and API key dropped',
      );
  }

  private heartbeat(client: pg.Client, backend: number): void {
    // One at a time: a heartbeat still waiting (at most connectTimeoutMs) is the one that decides.
    if (this.heartbeatInFlight) return;
    this.heartbeatInFlight = true;
    // Judged only when it had committed before this heartbeat began (see connect).
    const earlier = this.probe?.sent ? this.probe : undefined;
    backendOf(client)
      .finally(() => {
        this.heartbeatInFlight = false;
      })
      .then(
        (answered) => {
          if (this.client !== client) return;
          if (answered !== backend)
            return this.pooled(client, `LISTEN ran on server process ${backend}, the heartbeat on ${answered}`);
          if (earlier && !earlier.arrived && this.probe === earlier)
            return this.pooled(
              client,
              `a probe notification sent from the service's pool did not arrive within ${this.options.heartbeatMs} ms`,
            );
          this.sendProbe(client);
        },
        (err: unknown) => this.lost(client, err),
      );
  }

  private sendProbe(client: pg.Client): void {
    const { sendProbe, logger } = this.options;
    if (!sendProbe) return;
    const probe: Probe = { id: randomUUID(), sent: false, arrived: false };
    this.probe = probe;
    sendProbe(JSON.stringify({ kind: PROBE_KIND, probe: probe.id })).then(
      () => {
        probe.sent = true;
      },
      // The pool could not send it (the database is busy or down): nothing to judge at the next
      // heartbeat, which sends another.
      (err: unknown) => {
        if (this.probe === probe) this.probe = undefined;
        if (this.client === client) logger.debug({ err }, 'cache change listener: probe not sent');
      },
    );
  }

  /** Notifications cannot reach this connection (a transaction pooler): say so (once), then start over (which drops every cached entry). */
  private pooled(client: pg.Client, why: string): void {
    if (!this.warnedPooled) {
      this.warnedPooled = true;
      this.options.logger.error(
        { why },
        'cache change listener: its connection is pooled per transaction (PgBouncer in transaction mode?), so change notifications cannot reach it; ' +
          "set DATABASE_DIRECT_URL to PostgreSQL directly or to a session-mode pool. Until then a change applies on other instances within the caches' TTLs.",
      );
    }
    this.lost(client, new Error(why));
  }

  /** The connection is gone or unusable: discard it and try again after a backoff. */
  private lost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    this.probe = undefined;
    this.heartbeatInFlight = false;
    // With a statement in flight pg destroys the socket; a dead one is already closed.
    client.end().catch(() => undefined);
    if (this.closed) return;
    const { initialMs, maxMs } = this.options.retry;
    const backoff = Math.min(maxMs, initialMs * 2 ** this.failures);
    const delayMs = Math.round(backoff / 2 + Math.random() * (backoff / 2));
    this.failures++;
    this.options.logger.warn(
      { err, attempt: this.failures, retryInMs: delayMs },
      'cache change listener: disconnected; reconnecting (cached entries live at most their TTL meanwhile)',
    );
    this.retryTimer = setTimeout(() => void this.connect(), delayMs);
    this.retryTimer.unref();
  }
}
