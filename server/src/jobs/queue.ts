import type { MikroORM } from '@mikro-orm/postgresql';
import type { LimitFunction } from 'p-limit';
import { PgBoss, type Db as IDatabase } from 'pg-boss';
import type { Logger } from 'pino';
import { Db } from '../db/sql.js';

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

/**
 * pg-boss's database handle on the service's pool (each statement takes a pooled connection), its
 * statements within `limit`. Inside a transaction a job is sent with that transaction's handle
 * instead (`{ db: db.jobDatabase() }`, db/sql.ts), so it commits or rolls back with it.
 */
export function queueDatabase(db: Db, limit?: LimitFunction): IDatabase {
  const database = db.jobDatabase();
  const run = (text: string, values?: unknown[]) => database.executeSql(text, values);
  return { executeSql: (text, values) => (limit ? limit(() => run(text, values)) : run(text, values)) };
}

export interface QueueOptions {
  /** How often pg-boss looks for jobs whose worker stopped heart-beating (a crash): seconds, at least 1. */
  superviseIntervalSeconds?: number;
  /** Bounds the pooled connections the queue's own statements hold at once (shared with its caller's). */
  connections?: LimitFunction;
  /** Runs pg-boss's cron pass (schedules: the retention of outbound events). */
  schedule?: boolean;
}

/** How many times a start that failed is tried again (instances starting together race to install pg-boss's schema). */
const START_ATTEMPTS = 5;

/**
 * Starts pg-boss on the ORM's pool (its schema installed or migrated first). Instances started at
 * the same moment on a fresh database race to install that schema; pg-boss expects the loser to
 * see its own "already installed" message, but a loser can also meet PostgreSQL's duplicate-object
 * errors (two CREATE SCHEMA at once), which would end the process. So a failed start is tried
 * again a few times, after a short wait: by then the winner has installed the schema, and the
 * retry finds it.
 */
export async function startQueue(orm: MikroORM, logger: Logger, options: QueueOptions = {}): Promise<PgBoss> {
  for (let attempt = 1; ; attempt++) {
    const boss = newQueue(orm, logger, options);
    try {
      await boss.start();
      return boss;
    } catch (err) {
      await boss.stop({ graceful: false }).catch(() => undefined);
      if (attempt >= START_ATTEMPTS) throw err;
      logger.warn(
        { err, attempt },
        'job queue did not start (another instance may be installing its schema); trying again',
      );
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}

function newQueue(orm: MikroORM, logger: Logger, options: QueueOptions): PgBoss {
  const boss = new PgBoss({
    db: queueDatabase(Db.of(orm), options.connections),
    schema: QUEUE_SCHEMA,
    schedule: options.schedule ?? false,
    superviseIntervalSeconds: options.superviseIntervalSeconds ?? 10,
    monitorIntervalSeconds: 60,
  });
  boss.on('error', (err) => logger.error({ err }, 'job queue error'));
  return boss;
}
