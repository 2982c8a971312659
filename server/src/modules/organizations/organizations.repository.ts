import type { MikroORM } from '@mikro-orm/postgresql';
import { notifyChange } from '../../db/change-notifications.js';
import { kyselyOf, type NewRow, type StoredRow } from '../../db/database.js';
import { Sql } from '../../db/sql.js';
import type { CursorPosition } from '../../http/pagination.js';
import { isUuid } from '../../http/serialize.js';
import { sql } from 'kysely';
import { deleteOrganizationData } from './organization-data.js';

export type OrganizationRecord = StoredRow<'organizations'>;
/** An API key as it may be shown: everything but its hash. */
export type ApiKeyRecord = Omit<StoredRow<'api_keys'>, 'key_hash'>;

const API_KEY_SHOWN = ['id', 'organization_id', 'redacted', 'created_at', 'revoked_at'] as const;

/** The organizations module's only way to the database: organizations and their API keys. */
export class OrganizationsRepository {
  constructor(private readonly orm: MikroORM) {}

  /** An organization and its first key, together or not at all. */
  insertWithKey(organization: NewRow<'organizations'>, key: NewRow<'api_keys'>): Promise<void> {
    return Sql.of(this.orm).transaction(async (sql) => {
      const db = kyselyOf(this.orm);
      await sql.execute(db.insertInto('organizations').values(organization));
      await sql.execute(db.insertInto('api_keys').values(key));
    });
  }

  async exists(organizationId: string): Promise<boolean> {
    if (!isUuid(organizationId)) return false;
    const found = await kyselyOf(this.orm).selectFrom('organizations').select('id').where('id', '=', organizationId).executeTakeFirst();
    return found !== undefined;
  }

  async insertKey(key: NewRow<'api_keys'>): Promise<void> {
    await kyselyOf(this.orm).insertInto('api_keys').values(key).execute();
  }

  listKeys(organizationId: string): Promise<ApiKeyRecord[]> {
    return kyselyOf(this.orm).selectFrom('api_keys').select(API_KEY_SHOWN).where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
  }

  /** A page of the keys in creation order, after a cursor's position; one more than the page. */
  keysAfter(organizationId: string, after: CursorPosition | undefined, limit: number): Promise<ApiKeyRecord[]> {
    let query = kyselyOf(this.orm).selectFrom('api_keys').select(API_KEY_SHOWN).where('organization_id', '=', organizationId);
    if (after) query = query.where(sql<boolean>`(created_at, id) > (${after.at}, ${after.id})`);
    return query.orderBy('created_at').orderBy('id').limit(limit + 1).execute();
  }

  /**
   * Marks the key revoked (a revoked key keeps its first revocation time) and, in the same
   * transaction, notifies every instance, which drop the key from their caches once it commits
   * (db/change-notifications.ts). Undefined when the organization has no such key.
   */
  revokeKey(organizationId: string, keyId: string, at: Date): Promise<(ApiKeyRecord & { key_hash: string }) | undefined> {
    if (!isUuid(organizationId) || !isUuid(keyId)) return Promise.resolve(undefined);
    return Sql.of(this.orm).transaction(async (sql) => {
      const [revoked] = await sql.execute(
        kyselyOf(this.orm)
          .updateTable('api_keys')
          .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(at)) }))
          .where('organization_id', '=', organizationId)
          .where('id', '=', keyId)
          .returning([...API_KEY_SHOWN, 'key_hash']),
      );
      if (revoked) await notifyChange((query, params) => sql.rows(query, params), { kind: 'api_key', keyHash: revoked.key_hash });
      return revoked;
    });
  }

  /** The organization of a valid, unrevoked key hash, or undefined. */
  findByKeyHash(keyHash: string): Promise<Pick<OrganizationRecord, 'id' | 'name'> | undefined> {
    return kyselyOf(this.orm)
      .selectFrom('api_keys as k')
      .innerJoin('organizations as o', 'o.id', 'k.organization_id')
      .select(['o.id', 'o.name'])
      .where('k.key_hash', '=', keyHash)
      .where('k.revoked_at', 'is', null)
      .executeTakeFirst();
  }

  /** Deletes the organization and everything it owns, in one transaction (organization-data.ts); undefined when there is none. */
  deleteWithEverything(organizationId: string): Promise<{ deleted: Record<string, number>; keyHashes: string[] } | undefined> {
    if (!isUuid(organizationId)) return Promise.resolve(undefined);
    return Sql.of(this.orm).transaction((sql) => deleteOrganizationData(sql, organizationId));
  }

  /** The organization's retention of clicks in days; null keeps them; undefined when there is no such organization. */
  async clickRetentionDays(organizationId: string): Promise<number | null | undefined> {
    const row = await kyselyOf(this.orm).selectFrom('organizations').select('click_retention_days').where('id', '=', organizationId).executeTakeFirst();
    return row === undefined ? undefined : (row.click_retention_days ?? null);
  }

  async setClickRetentionDays(organizationId: string, days: number | null): Promise<void> {
    await kyselyOf(this.orm).updateTable('organizations').set({ click_retention_days: days }).where('id', '=', organizationId).execute();
  }
}
