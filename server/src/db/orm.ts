import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import pg from 'pg';
import { sql } from 'kysely';
import { DATABASE_TIMEOUT_DEFAULTS } from '../config.js';
import { ApiKeyEntity, OrganizationEntity } from '../modules/organizations/organization.entity.js';
import { ProgramEntity } from '../modules/programs/program.entity.js';
import { AffiliateEntity } from '../modules/affiliates/affiliate.entity.js';
import { ClickEntity } from '../modules/clicks/click.entity.js';
import { CustomerEntity } from '../modules/customers/customer.entity.js';
import { ConversionEntity } from '../modules/conversions/conversion.entity.js';
import { IntegrationEntity } from '../modules/integrations/integration.entity.js';
import { ConversionRefundEntity } from '../modules/conversions/conversion-refund.entity.js';
import { PaymentReferenceEntity, WebhookEventEntity, WebhookRejectionEntity } from '../webhooks/webhook.entities.js';
import { CommissionEntity } from '../modules/commissions/commission.entity.js';
import { PayoutEntity } from '../modules/payouts/payout.entity.js';
import { CouponEntity } from '../modules/coupons/coupon.entity.js';
import { SuppressedClickEntity } from '../modules/clicks/suppressed-click.entity.js';
import { migrationsList } from './migrations/index.js';
import { attachReplicas, kyselyOf, registerConnection, replicaRoutingOf } from './database.js';
import { ReplicaRouting, type ReplicaEvents } from './replica-reads.js';

export const entities = [
  OrganizationEntity,
  ApiKeyEntity,
  ProgramEntity,
  AffiliateEntity,
  ClickEntity,
  CustomerEntity,
  ConversionEntity,
  IntegrationEntity,
  ConversionRefundEntity,
  WebhookEventEntity,
  WebhookRejectionEntity,
  PaymentReferenceEntity,
  CommissionEntity,
  PayoutEntity,
  CouponEntity,
  SuppressedClickEntity,
];

/** The bounds on waits for PostgreSQL (config.ts: DB_*_TIMEOUT_MS). */
export interface DatabaseTimeouts {
  /** Sent as the `statement_timeout` start-up parameter, so PostgreSQL cancels a longer statement; 0: not sent. */
  statementMs: number;
  /** How long the client waits for a statement's answer before failing it and discarding the connection; 0: no bound. */
  queryMs: number;
  /** How long a caller waits for a pooled connection, opening one included. */
  acquireMs: number;
  /** How long opening one connection may take. */
  connectMs: number;
}

export const defaultDatabaseTimeouts: DatabaseTimeouts = {
  statementMs: DATABASE_TIMEOUT_DEFAULTS.statementMs,
  queryMs: DATABASE_TIMEOUT_DEFAULTS.statementMs + DATABASE_TIMEOUT_DEFAULTS.answerGraceMs,
  acquireMs: DATABASE_TIMEOUT_DEFAULTS.acquireMs,
  connectMs: DATABASE_TIMEOUT_DEFAULTS.connectMs,
};

/**
 * How column values are read, on every connection of the pool (the ORM's own statements
 * included): pg's own parsers. numeric and bigint stay exact strings, json is parsed, and
 * timestamps arrive as Date from pg's PostgreSQL-aware parser rather than as the text MikroORM's
 * default parsers keep them in: a later `new Date(text)` reads that text lossily (years before 100
 * or BC are not ISO-8601, and JavaScript's parser guesses them wrong).
 */
const VALUE_PARSERS: pg.CustomTypesConfig = { getTypeParser: pg.types.getTypeParser };

/** pg's error for a statement unanswered within query_timeout (node_modules/pg/lib/client.js). */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/** The pool's client class (see boundedClient), which knows its open connections. */
interface BoundedClientClass {
  new (config?: pg.ClientConfig): pg.Client;
  /**
   * Resolves once every connection opened with this class has closed its socket. pg-pool's end()
   * (hence MikroORM's close()) resolves as soon as it has asked each connection to end; the
   * embedded database accepts one connection at a time, so a new pool must not connect before the
   * last one's socket has closed.
   */
  allClosed(): Promise<void>;
}

/**
 * The pool's client options with this connection's own bound on opening it. pg-pool hands each
 * client its options with the password made non-enumerable (so that a logged pool shows none): a
 * spread or JSON copy would drop it, and every connection to a server that asks for a password
 * would fail ("SASL: client password must be a string"). So every own property is copied with its
 * descriptor, the password staying both present and hidden.
 */
function withConnectTimeout(config: pg.ClientConfig, connectMs: number): pg.ClientConfig {
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(config)) as pg.ClientConfig;
  copy.connectionTimeoutMillis = connectMs;
  return copy;
}

/**
 * The `pg` client class the pool opens its connections with (pg's `Client` pool option), with
 * the two bounds pg-pool cannot express on its own:
 *
 * - Opening one connection is bounded by DB_CONNECT_TIMEOUT_MS, while the pool's own
 *   `connectionTimeoutMillis` bounds the whole wait for a connection (DB_ACQUIRE_TIMEOUT_MS).
 * - pg's query_timeout fails the caller but leaves the connection waiting for that statement's
 *   answer: whatever is sent on it next (the transaction's ROLLBACK, the next request's statement
 *   once the pool lends it again) would queue behind a statement that may never be answered. So a
 *   connection whose statement timed out is ended at once (with a statement in flight, pg's end()
 *   destroys the socket, which fails anything queued on it immediately); pg-pool drops a client
 *   that is ending when it comes back, so it never serves again.
 */
function boundedClient(timeouts: DatabaseTimeouts): BoundedClientClass {
  const open = new Set<pg.Client>();
  return class BoundedClient extends pg.Client {
    static async allClosed(): Promise<void> {
      await Promise.all([...open].map((client) => new Promise((resolve) => client.once('end', resolve))));
    }

    constructor(config: pg.ClientConfig = {}) {
      super(withConnectTimeout(config, timeouts.connectMs));
      this.once('connect', () => open.add(this));
      this.once('end', () => open.delete(this));
    }

    /** Ends this connection when a statement's answer did not come within query_timeout (one handler per connection). */
    private readonly endIfTimedOut = (err: unknown): void => {
      if (err instanceof Error && err.message.endsWith(QUERY_TIMEOUT_MESSAGE)) this.end().catch(() => undefined);
    };

    override query(...args: unknown[]): never {
      // Without a client-side bound no statement times out: every statement goes straight through.
      if (timeouts.queryMs <= 0) return (super.query as (...a: unknown[]) => unknown)(...args) as never;
      const { endIfTimedOut } = this;
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === 'function') {
        args[last] = (err: unknown, result: unknown) => {
          if (err) endIfTimedOut(err);
          return (callback as (err: unknown, result: unknown) => unknown)(err, result);
        };
      }
      const result = (super.query as (...a: unknown[]) => unknown)(...args);
      // Registered before the caller's own handler, so the connection is ending before it is released.
      if (result instanceof Promise) result.catch(endIfTimedOut);
      return result as never;
    }
  };
}

export function ormOptions(
  clientUrl: string,
  poolMax: number,
  timeouts: DatabaseTimeouts = defaultDatabaseTimeouts,
): Options {
  return {
    clientUrl,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    pool: { min: 0, max: poolMax },
    // pg.PoolConfig, given to the pool MikroORM opens. No session `SET` on pooled connections
    // (PgBouncer in transaction mode would carry it to other clients): statement_timeout goes in
    // the start-up packet, and the client-side bounds hold whether or not the server (or a pooler
    // in front) applies it.
    driverOptions: {
      Client: boundedClient(timeouts),
      connectionTimeoutMillis: timeouts.acquireMs,
      types: VALUE_PARSERS,
      ...(timeouts.queryMs > 0 ? { query_timeout: timeouts.queryMs } : {}),
      ...(timeouts.statementMs > 0 ? { statement_timeout: timeouts.statementMs } : {}),
    } satisfies pg.PoolConfig,
    forceUtcTimezone: true,
    allowGlobalContext: false,
    debug: false,
    discovery: { warnWhenNoEntities: false },
  };
}

/**
 * Connects with these options and registers the connection (db/database.ts), so that db/sql.ts
 * and MikroORM's kysely serve this ORM's statements. Every ORM the service or a test opens comes
 * from here.
 */
export async function connectOrm(options: Options): Promise<MikroORM> {
  const orm = await MikroORM.init(options);
  await registerConnection(orm);
  return orm;
}

/** How initOrm starts: applying the migrations, and what it tells the caller. */
export interface StartOptions {
  /**
   * Several processes may start at once on this database (any real PostgreSQL): migrations are
   * applied under a lock, by whichever process takes it first (see migrateOnce). Off for the
   * embedded database, which serves one process over one connection.
   */
  concurrentStarts?: boolean;
  /** Told when this process waits for another one's migrations. */
  onWait?: () => void;
  /**
   * Told when the server refused the `statement_timeout` start-up parameter (PgBouncer does,
   * unless it is listed in its `ignore_startup_parameters`): the service then connects without it.
   */
  onStatementTimeoutRefused?: (err: Error) => void;
  /** Read replicas (DATABASE_REPLICA_URLS), for the reads that tolerate lag (db/replica-reads.ts). */
  replicaUrls?: readonly string[];
  /** Told when a replica stops answering (its reads go to the primary) and when it is back. */
  replicaEvents?: ReplicaEvents;
}

/**
 * Applies every pending committed migration, then connects for serving. Migrations run on a
 * connection of their own without the statement bounds: building an index on a large table may
 * rightly take minutes, and start-up is not a request anyone waits on with a 503 in hand. Opening
 * the connection is still bounded, so an unreachable database fails the start quickly.
 */
export async function initOrm(
  clientUrl: string,
  poolMax: number,
  timeouts: DatabaseTimeouts = defaultDatabaseTimeouts,
  start: StartOptions = {},
): Promise<MikroORM> {
  // Under the lock, the migrator checks for its table on a second connection (MikroORM's init).
  const migrating = await MikroORM.init(
    ormOptions(clientUrl, Math.max(poolMax, start.concurrentStarts ? 2 : 1), {
      ...timeouts,
      statementMs: 0,
      queryMs: 0,
    }),
  );
  try {
    if (start.concurrentStarts) await migrateOnce(migrating, start.onWait);
    else await migrating.migrator.up();
  } finally {
    await closeOrm(migrating);
  }
  let serving = timeouts;
  if (timeouts.statementMs > 0) {
    // The replicas' pools share these bounds: one that refuses the parameter drops it for all.
    const refusals = await Promise.all(
      [clientUrl, ...(start.replicaUrls ?? [])].map((url) => statementTimeoutRefused(url, timeouts)),
    );
    const refused = refusals.find((err) => err !== undefined);
    if (refused) {
      start.onStatementTimeoutRefused?.(refused);
      serving = { ...timeouts, statementMs: 0 };
    }
  }
  const orm = await connectOrm(ormOptions(clientUrl, poolMax, serving));
  const replicaUrls = start.replicaUrls ?? [];
  if (replicaUrls.length > 0) {
    // Each replica gets an ORM and pool like the primary's (same bounds, parsers and timeouts).
    // Nothing connects yet (no check that its database exists, which would need it up): a replica
    // down at start only sends its reads to the primary.
    const replicas = await Promise.all(
      replicaUrls.map(async (url, i) => ({
        name: `replica-${i + 1}`,
        orm: await connectOrm({ ...ormOptions(url, poolMax, serving), ensureDatabase: false }),
      })),
    );
    attachReplicas(
      orm,
      new ReplicaRouting(orm, replicas, start.replicaEvents, (replica) => sql`select 1`.execute(kyselyOf(replica))),
    );
  }
  return orm;
}

/**
 * Whether the server refuses the `statement_timeout` start-up parameter: PgBouncer answers
 * "unsupported startup parameter" (08P01) for any parameter it neither tracks nor is told to
 * ignore, and would refuse every connection of the pool. Any other failure is not this one's to
 * report: the pool meets it again.
 */
async function statementTimeoutRefused(clientUrl: string, timeouts: DatabaseTimeouts): Promise<Error | undefined> {
  const probe = new pg.Client({
    connectionString: clientUrl,
    statement_timeout: timeouts.statementMs,
    connectionTimeoutMillis: timeouts.connectMs,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return undefined;
  } catch (err) {
    return err instanceof Error && /unsupported startup parameter: statement_timeout/i.test(err.message)
      ? err
      : undefined;
  } finally {
    await probe.end().catch(() => undefined);
  }
}

/** The advisory lock (one bigint key, per database) under which migrations are applied. */
const MIGRATION_LOCK = "hashtext('affiliate-attribution migrations')";
/** How often a process whose migrations wait for another's tries the lock again. */
const MIGRATION_LOCK_RETRY_MS = 200;

/**
 * Applies the pending migrations in one transaction that holds a transaction-scoped advisory lock,
 * so that processes starting together on one database apply them once: the first to take the lock
 * applies them and commits (the lock goes with the commit), each other one then finds nothing
 * pending. A session lock would not do: behind PgBouncer in transaction mode the session that took
 * it is not the one that would release it. A process that finds the lock taken does not wait in
 * PostgreSQL, holding a server connection (behind a pooler the one that applies the migrations may
 * need it): it rolls back and tries again shortly. Should the process holding it die, PostgreSQL
 * rolls its transaction back and releases the lock; the next one applies everything.
 */
async function migrateOnce(orm: MikroORM, onWait?: () => void): Promise<void> {
  const connection = orm.em.getConnection();
  let told = false;
  for (;;) {
    const applied = await connection.transactional(async (trx) => {
      const [{ locked }] = await connection.execute<{ locked: boolean }[]>(
        `select pg_try_advisory_xact_lock(${MIGRATION_LOCK}) as locked`,
        [],
        'all',
        trx,
      );
      if (!locked) return false;
      await orm.migrator.up({ transaction: trx });
      return true;
    });
    if (applied) return;
    if (!told) onWait?.();
    told = true;
    await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_RETRY_MS));
  }
}

/**
 * Closes the ORM, and resolves once its connections' sockets have closed (BoundedClientClass):
 * then the embedded database takes a new connection (the next start's, or the next ORM's).
 */
export async function closeOrm(orm: MikroORM, force = false): Promise<void> {
  const replicas = replicaRoutingOf(orm);
  replicas?.close();
  await Promise.all((replicas?.orms() ?? []).map((replica) => closeOrm(replica, force)));
  await orm.close(force);
  await orm.config
    .get<'driverOptions', { Client?: Partial<BoundedClientClass> }>('driverOptions')
    .Client?.allClosed?.();
}

/** The bounds as configured (config.ts). */
export function databaseTimeouts(config: {
  DB_STATEMENT_TIMEOUT_MS: number;
  DB_QUERY_TIMEOUT_MS: number;
  DB_ACQUIRE_TIMEOUT_MS: number;
  DB_CONNECT_TIMEOUT_MS: number;
}): DatabaseTimeouts {
  return {
    statementMs: config.DB_STATEMENT_TIMEOUT_MS,
    queryMs: config.DB_QUERY_TIMEOUT_MS,
    acquireMs: config.DB_ACQUIRE_TIMEOUT_MS,
    connectMs: config.DB_CONNECT_TIMEOUT_MS,
  };
}
