import { Migration } from '@mikro-orm/migrations';
import { distributeSchema, type Execute } from '../citus.js';

/**
 * On a Citus coordinator (the citus extension installed, its workers added), distributes the
 * schema (db/distribution.ts): the tenant tables hash-distributed by organization_id and
 * co-located, the organization-level tables as reference tables, rate-limit counters by their key;
 * the migrations' record and the job queue's schema stay local. On plain PostgreSQL it does
 * nothing: the same schema, undistributed. Runs after the report read model lost its triggers and
 * functions (Citus holds no trigger reading other shards' rows).
 */
export class Migration20270202000000_citus_distribution extends Migration {
  override async up(): Promise<void> {
    await distributeSchema(((sql: string) => this.execute(sql)) as Execute);
  }

  override async down(): Promise<void> {
    // Undistributing (undistribute_table) copies every shard back to the coordinator: an operator's
    // decision with its own downtime, not a migration's. Plain PostgreSQL has nothing to undo.
  }
}
