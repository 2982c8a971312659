import type { EntityMetadata, EntityName, InferKyselyDB, MikroORM } from '@mikro-orm/postgresql';
import type { Insertable, Kysely, Selectable } from 'kysely';
import pLimit, { type LimitFunction } from 'p-limit';
import type pg from 'pg';
import type { entities } from './orm.js';
import type { ReplicaRead, ReplicaRouting } from './replica-reads.js';

/**
 * The tables as kysely sees them, inferred from the entity definitions (`defineEntity`): table
 * names from `tableName`, columns and their value types from the properties. A column added to an
 * entity is in every statement built on these types, and one renamed fails the type check.
 */
export type Tables = InferKyselyDB<Entity>;
export type TableName = Extract<keyof Tables, string>;
/** An entity definition (db/orm.ts lists them). */
export type Entity = (typeof entities)[number];
/** An entity's table. */
export type TableOf<E extends Entity> = keyof InferKyselyDB<E> & TableName;
/** A column of an entity's table. */
export type ColumnOf<E extends Entity> = keyof Tables[TableOf<E>] & string;
/** A row as inserted: columns with a database default or NULL may be left out. */
export type NewRow<T extends TableName> = Insertable<Tables[T]>;
/** A row as read back. */
export type StoredRow<T extends TableName> = Selectable<Tables[T]>;

/** What an ORM connected to: the pool MikroORM opened, and MikroORM's kysely on that pool. */
interface Connection {
  pool: pg.Pool;
  kysely: Kysely<Tables>;
  batchedWrites: LimitFunction;
  /** Set on a primary with read replicas (DATABASE_REPLICA_URLS): where REPLICA_READS go. */
  replicas?: ReplicaRouting;
}

/**
 * The connections the batched writes of one ORM may hold at once, shared by every batcher
 * (db/batched-insert.ts): half the pool, at least one. The other half is left to everything else
 * (reads, refunds, webhooks, health checks), however many batchers there are and however their
 * statements fail and are retried.
 */
export const batchedWriteConnections = (poolMax: number): number => Math.max(1, Math.floor(poolMax / 2));

const connections = new WeakMap<MikroORM, Connection>();

/**
 * Called once per ORM, once it has connected (db/orm.ts, connectOrm). Both handles are taken
 * then and kept: statements on an ORM that has since been closed fail (its pool has ended) rather
 * than open a new pool behind the caller's back.
 */
export async function registerConnection(orm: MikroORM): Promise<void> {
  const pool = await orm.em.getConnection().getNativeClient();
  connections.set(orm, {
    pool,
    kysely: orm.em.getKysely<Tables>(),
    batchedWrites: pLimit(batchedWriteConnections(pool.options.max ?? 10)),
  });
}

function connectionOf(orm: MikroORM): Connection {
  const connection = connections.get(orm);
  if (!connection) throw new Error('This ORM was not opened by connectOrm (db/orm.ts)');
  return connection;
}

/** The bound on the connections this ORM's batched writes hold at once (batchedWriteConnections). */
export const batchedWritesOf = (orm: MikroORM): LimitFunction => connectionOf(orm).batchedWrites;

/** The pg pool MikroORM opened (its size and counts: the metrics, the bounds on batched writes and delivery). */
export const poolOf = (orm: MikroORM): pg.Pool => connectionOf(orm).pool;

/**
 * MikroORM's kysely (`em.getKysely()`), typed from the entities, without MikroORM's plugin (the
 * tables' own names are used, and values are read by the pool's parsers, db/orm.ts). Outside any
 * transaction: each statement takes a pooled connection and returns it. On this ORM's database:
 * the primary, except on the replica's ORM that readFromReplica hands its callback.
 */
export const kyselyOf = (orm: MikroORM): Kysely<Tables> => connectionOf(orm).kysely;

/** Routes this primary's REPLICA_READS to these replicas (db/orm.ts, initOrm). */
export function attachReplicas(orm: MikroORM, routing: ReplicaRouting): void {
  connectionOf(orm).replicas = routing;
}

/** The replicas' routing of this ORM, if it has replicas. */
export const replicaRoutingOf = (orm: MikroORM): ReplicaRouting | undefined => connections.get(orm)?.replicas;

/**
 * A read that tolerates lag, named by its entry of REPLICA_READS (db/replica-reads.ts, the one
 * list of them): `fn` runs on a read replica's ORM (kyselyOf / Db.of on it), or on the primary's
 * when there are none or none answers (ReplicaRouting). A list read there may be behind by the
 * replica's lag: a conversion just recorded may not be listed yet. Everything else stays on the
 * primary (kyselyOf, Db.of on the ORM itself).
 */
export function readFromReplica<T>(orm: MikroORM, read: ReplicaRead, fn: (source: MikroORM) => Promise<T>): Promise<T> {
  const routing = connectionOf(orm).replicas;
  return routing ? routing.read(read, fn) : fn(orm);
}

/** An entity's metadata as MikroORM discovered it: table name, and each property's column name and type. */
export const metadataOf = (orm: MikroORM, entity: Entity): EntityMetadata =>
  orm.getMetadata(entity as unknown as EntityName<object>) as EntityMetadata;
