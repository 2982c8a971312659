import type { MikroORM } from '@mikro-orm/postgresql';
import type { LimitFunction } from 'p-limit';
import type pg from 'pg';
import { PgBoss, type Db as IDatabase } from 'pg-boss';
import type { Logger } from 'pino';
import { poolOf } from '../db/database.js';

/**
 * The service's one job queue: pg-boss, on the service's own PostgreSQL (schema `pgboss`, which
 * pg-boss creates and migrates itself at start, under its own lock).
 *
 * Why pg-boss rather than graphile-worker: pg-boss runs on any database handle we give it (the
 * `db` adapter below is the service's own pool), so on the embedded database, which accepts one
 * connection, the queue shares that connection with the API; graphile-worker needs its own pool
 * and holds a connection for LISTEN, which the embedded database cannot give. pg-boss polls
 * (SKIP LOCKED) and needs no Redis; a job can be inserted in the caller's transaction (the
 * relay's, the delivery log's), so nothing is queued for a change that did not commit, and a
 * crashed worker's jobs come back (heartbeats, expiry), so delivery is at least once.
 */
export const QUEUE_SCHEMA = 'pgboss';

/** A pg-boss database handle on a pg pool (each statement takes a pooled connection) or on one connection (a transaction). */
export function databaseOn(client: pg.Pool | pg.PoolClient, limit?: LimitFunction): IDatabase {
  const run = (text: string, values: unknown[] | undefined) => client.query(text, values);
  return { executeSql: (text, values) => (limit ? limit(() => run(text, values as unknown[] | undefined)) : run(text, values as unknown[] | undefined)) };
}

export interface QueueOptions {
  /** How often pg-boss looks for jobs whose worker stopped heart-beating (a crash): seconds, at least 1. */
  superviseIntervalSeconds?: number;
  /** Bounds the pooled connections the queue's own statements hold at once (shared with its caller's). */
  connections?: LimitFunction;
}

/** Starts pg-boss on the ORM's pool (its schema installed or migrated first). */
export async function startQueue(orm: MikroORM, logger: Logger, options: QueueOptions = {}): Promise<PgBoss> {
  const boss = new PgBoss({
    db: databaseOn(poolOf(orm), options.connections),
    schema: QUEUE_SCHEMA,
    schedule: false,
    superviseIntervalSeconds: options.superviseIntervalSeconds ?? 10,
    monitorIntervalSeconds: 60,
  });
  boss.on('error', (err) => logger.error({ err }, 'job queue error'));
  await boss.start();
  return boss;
}
