import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type pg from 'pg';
import { DATABASE_TIMEOUT_DEFAULTS } from '../config.js';
import { ApiKeyEntity, OrganizationEntity } from '../modules/organizations/organization.entity.js';
import { ProgramEntity } from '../modules/programs/program.entity.js';
import { AffiliateEntity } from '../modules/affiliates/affiliate.entity.js';
import { ClickEntity } from '../modules/clicks/click.entity.js';
import { CustomerEntity } from '../modules/customers/customer.entity.js';
import { ConversionEntity } from '../modules/conversions/conversion.entity.js';
import { IntegrationEntity } from '../modules/integrations/integration.entity.js';
import { migrationsList } from './migrations/index.js';

export const entities = [
  OrganizationEntity,
  ApiKeyEntity,
  ProgramEntity,
  AffiliateEntity,
  ClickEntity,
  CustomerEntity,
  ConversionEntity,
  IntegrationEntity,
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

/** pg's error for a statement unanswered within query_timeout (node_modules/pg/lib/client.js). */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/** Connections whose statement timed out: the pool's `validate` refuses them (see endOnQueryTimeout). */
const timedOut = new WeakSet<pg.Client>();

/**
 * pg's query_timeout fails the caller but leaves the connection waiting for that statement's
 * answer: whatever is sent on it next (the transaction's ROLLBACK, the next request's statement
 * once the pool lends it again) would queue behind a statement that may never be answered. So a
 * connection whose statement timed out is ended at once (with a statement in flight, pg's end()
 * destroys the socket, which fails anything queued on it immediately) and the pool refuses it
 * from that moment, before pg has even emitted its 'end'.
 */
function endOnQueryTimeout(connection: pg.Client): void {
  const query = connection.query.bind(connection) as (...args: unknown[]) => unknown;
  const endIfTimedOut = (err: unknown) => {
    if (!(err instanceof Error) || !err.message.endsWith(QUERY_TIMEOUT_MESSAGE) || timedOut.has(connection)) return;
    timedOut.add(connection);
    connection.end().catch(() => undefined);
  };
  // Both of pg's forms are in use: knex passes a callback, db/sql.ts awaits the promise.
  (connection as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (err: unknown, result: unknown) => {
        if (err) endIfTimedOut(err);
        return (callback as (err: unknown, result: unknown) => unknown)(err, result);
      };
      return query(...args);
    }
    const result = query(...args);
    // Registered before the caller's own handler, so the connection is refused before it is released.
    if (result instanceof Promise) result.catch(endIfTimedOut);
    return result;
  };
}

export function ormOptions(clientUrl: string, poolMax: number, timeouts: DatabaseTimeouts = defaultDatabaseTimeouts): Options {
  return {
    clientUrl,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    pool: {
      min: 0,
      max: poolMax,
      // tarn's wait for a free connection or a new one; knex takes the smaller of this and
      // acquireConnectionTimeout below (default 60 s), so both are set.
      acquireTimeoutMillis: timeouts.acquireMs,
      afterCreate: (connection: pg.Client, done: (err: Error | null, connection: pg.Client) => void) => {
        if (timeouts.queryMs > 0) endOnQueryTimeout(connection);
        done(null, connection);
      },
    },
    driverOptions: {
      // knex's pool option, merged into `pool` above (MikroORM's type of `pool` does not list it).
      pool: { validate: (connection: pg.Client) => !timedOut.has(connection) },
      acquireConnectionTimeout: timeouts.acquireMs,
      // pg.ClientConfig. No session `SET` on pooled connections (PgBouncer in transaction mode
      // would carry it to other clients): statement_timeout goes in the start-up packet, and the
      // client-side bounds hold whether or not the server (or a pooler in front) applies it.
      connection: {
        connectionTimeoutMillis: timeouts.connectMs,
        ...(timeouts.queryMs > 0 ? { query_timeout: timeouts.queryMs } : {}),
        ...(timeouts.statementMs > 0 ? { statement_timeout: timeouts.statementMs } : {}),
      },
    },
    forceUtcTimezone: true,
    allowGlobalContext: false,
    debug: false,
    discovery: { warnWhenNoEntities: false },
  };
}

/**
 * Applies every pending committed migration, then connects for serving. Migrations run on a
 * connection of their own without the statement bounds: building an index on a large table may
 * rightly take minutes, and start-up is not a request anyone waits on with a 503 in hand. Opening
 * the connection is still bounded, so an unreachable database fails the start quickly.
 */
export async function initOrm(clientUrl: string, poolMax: number, timeouts: DatabaseTimeouts = defaultDatabaseTimeouts): Promise<MikroORM> {
  const migrating = await MikroORM.init(ormOptions(clientUrl, poolMax, { ...timeouts, statementMs: 0, queryMs: 0 }));
  try {
    await migrating.getMigrator().up();
  } finally {
    await migrating.close();
  }
  return MikroORM.init(ormOptions(clientUrl, poolMax, timeouts));
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
