import type { MikroORM } from '@mikro-orm/postgresql';
import { notifyChange } from '../../db/change-notifications.js';
import { kyselyOf, type NewRow, type StoredRow } from '../../db/database.js';
import { Db } from '../../db/sql.js';
import type { Mode } from '@affiliate-attribution/contract';
import type { CursorPosition } from '../../http/pagination.js';
import { isUuid } from '../../http/serialize.js';
import { sql } from 'kysely';
import type { OrganizationContext } from '../../http/organization-context.js';
import {
  findDeletion,
  latestDeletion,
  requestOrganizationDeletion,
  requestTestDataDeletion,
  type DeletionKind,
  type DeletionRecord,
  type RequestedDeletion,
} from './data-deletion.js';

export type OrganizationRecord = StoredRow<'organizations'>;
/** An organization as inserted: livemode is generated (live_organization_id is null). */
export type NewOrganization = Omit<NewRow<'organizations'>, 'livemode'>;
/** An API key as it may be shown: everything but its hash, with its organization's mode. */
export type ApiKeyRecord = Omit<StoredRow<'api_keys'>, 'key_hash'> & { livemode: boolean };

const API_KEY_SHOWN = [
  'k.id',
  'k.organization_id',
  'k.redacted',
  'k.created_at',
  'k.revoked_at',
  'o.livemode',
] as const;

/** The organizations module's only way to the database: organizations and their API keys. */
export class OrganizationsRepository {
  constructor(private readonly orm: MikroORM) {}

  /**
   * A live organization, its test twin (Migration20270105000000_test_mode) and their first keys,
   * together or not at all: no live organization exists without its twin.
   */
  insertWithTwin(organization: NewOrganization, twin: NewOrganization, keys: NewRow<'api_keys'>[]): Promise<void> {
    return Db.of(this.orm).transaction(async (db) => {
      // livemode is PostgreSQL's to generate; the entity types it as a plain column (read, never written).
      await db.rows(db.kysely.insertInto('organizations').values([organization, twin] as NewRow<'organizations'>[]));
      await db.rows(db.kysely.insertInto('api_keys').values(keys));
    });
  }

  /** Whether a live organization has this id (the operator's routes name live organizations only; a twin's id is not one). */
  async exists(organizationId: string): Promise<boolean> {
    if (!isUuid(organizationId)) return false;
    const found = await kyselyOf(this.orm)
      .selectFrom('organizations')
      .select('id')
      .where('id', '=', organizationId)
      .where('livemode', '=', true)
      .where('deletion_requested_at', 'is', null)
      .executeTakeFirst();
    return found !== undefined;
  }

  /** The test twin of a live organization; undefined when there is no such live organization. */
  async testOrganizationOf(liveOrganizationId: string): Promise<string | undefined> {
    if (!isUuid(liveOrganizationId)) return undefined;
    const found = await kyselyOf(this.orm)
      .selectFrom('organizations')
      .select('id')
      .where('live_organization_id', '=', liveOrganizationId)
      .executeTakeFirst();
    return found?.id;
  }

  /**
   * Where a public request in test mode goes, for the organization id in its path: the live
   * organization's twin; a test organization itself; an id that names no organization, as it is
   * (answered downstream as any unknown organization is, revealing nothing). One statement.
   */
  async testDataOf(organizationId: string): Promise<string> {
    const rows = await kyselyOf(this.orm)
      .selectFrom('organizations')
      .select(['id', 'livemode', 'live_organization_id'])
      .where((eb) => eb.or([eb('id', '=', organizationId), eb('live_organization_id', '=', organizationId)]))
      .execute();
    const twin =
      rows.find((o) => o.live_organization_id === organizationId) ??
      rows.find((o) => o.id === organizationId && !o.livemode);
    if (twin) return twin.id;
    if (rows.length === 0) return organizationId;
    throw new Error(`organization ${organizationId} has no test organization`);
  }

  /** Whether an organization is live (true) or a test twin (false); undefined when there is none. */
  async modeOf(organizationId: string): Promise<boolean | undefined> {
    if (!isUuid(organizationId)) return undefined;
    const found = await kyselyOf(this.orm)
      .selectFrom('organizations')
      .select('livemode')
      .where('id', '=', organizationId)
      .executeTakeFirst();
    return found?.livemode;
  }

  /**
   * What a dashboard session acts as (modules/people/session.ts): the live organization, or in
   * test mode its twin, with the account's (live) id; one statement.
   */
  contextOf(liveOrganizationId: string, livemode: boolean): Promise<OrganizationContext | undefined> {
    if (!isUuid(liveOrganizationId)) return Promise.resolve(undefined);
    const query = kyselyOf(this.orm)
      .selectFrom('organizations')
      .select(['id', 'name', 'livemode', sql<string>`coalesce(live_organization_id, id)`.as('account_id')]);
    // An organization being deleted (data-deletion.ts) is no one's to act as any more.
    return (
      livemode
        ? query.where('id', '=', liveOrganizationId).where('livemode', '=', true)
        : query.where('live_organization_id', '=', liveOrganizationId)
    )
      .where('deletion_requested_at', 'is', null)
      .executeTakeFirst();
  }

  async insertKey(key: NewRow<'api_keys'>): Promise<void> {
    await kyselyOf(this.orm).insertInto('api_keys').values(key).execute();
  }

  /** The keys of both modes of a live organization: its own (live) and its twin's (test). */
  private keysOfAccount(accountId: string) {
    return kyselyOf(this.orm)
      .selectFrom('api_keys as k')
      .innerJoin('organizations as o', 'o.id', 'k.organization_id')
      .select(API_KEY_SHOWN)
      .where((eb) => eb.or([eb('o.id', '=', accountId), eb('o.live_organization_id', '=', accountId)]));
  }

  listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return this.keysOfAccount(accountId).orderBy('k.created_at').orderBy('k.id').execute();
  }

  /** A page of the keys of both modes (or of `mode`) in creation order, after a cursor's position; one more than the page. */
  keysAfter(
    accountId: string,
    mode: Mode | undefined,
    after: CursorPosition | undefined,
    limit: number,
  ): Promise<ApiKeyRecord[]> {
    let query = this.keysOfAccount(accountId);
    if (mode) query = query.where('o.livemode', '=', mode === 'live');
    if (after) query = query.where(sql<boolean>`(k.created_at, k.id) > (${after.at}, ${after.id})`);
    return query
      .orderBy('k.created_at')
      .orderBy('k.id')
      .limit(limit + 1)
      .execute();
  }

  /**
   * Marks the key revoked (a revoked key keeps its first revocation time) and, in the same
   * transaction, notifies every instance, which drop the key from their caches once it commits
   * (db/change-notifications.ts). A key of either mode of the account (the live organization);
   * undefined when it has no such key.
   */
  revokeKey(accountId: string, keyId: string, at: Date): Promise<(ApiKeyRecord & { key_hash: string }) | undefined> {
    if (!isUuid(accountId) || !isUuid(keyId)) return Promise.resolve(undefined);
    return Db.of(this.orm).transaction(async (db) => {
      const [revoked] = await db.rows(
        kyselyOf(this.orm)
          .updateTable('api_keys as k')
          .from('organizations as o')
          .set((eb) => ({ revoked_at: eb.fn.coalesce('k.revoked_at', eb.val(at)) }))
          .whereRef('o.id', '=', 'k.organization_id')
          .where((eb) => eb.or([eb('o.id', '=', accountId), eb('o.live_organization_id', '=', accountId)]))
          .where('k.id', '=', keyId)
          .returning([...API_KEY_SHOWN, 'k.key_hash']),
      );
      if (revoked) await notifyChange(db, { kind: 'api_key', keyHash: revoked.key_hash });
      return revoked;
    });
  }

  /**
   * The organization of a valid, unrevoked key hash, or undefined: the key's own organization (a
   * test key's is the twin), its mode, and the account (live organization) id, in one statement.
   */
  findByKeyHash(keyHash: string): Promise<OrganizationContext | undefined> {
    return kyselyOf(this.orm)
      .selectFrom('api_keys as k')
      .innerJoin('organizations as o', 'o.id', 'k.organization_id')
      .select(['o.id', 'o.name', 'o.livemode', sql<string>`coalesce(o.live_organization_id, o.id)`.as('account_id')])
      .where('k.key_hash', '=', keyHash)
      .where('k.revoked_at', 'is', null)
      .where('o.deletion_requested_at', 'is', null)
      .executeTakeFirst();
  }

  /** Makes a live organization and its twin unusable and records their deletion, in one short transaction (data-deletion.ts); undefined when there is none. */
  requestDeletion(organizationId: string): Promise<RequestedDeletion | undefined> {
    if (!isUuid(organizationId)) return Promise.resolve(undefined);
    return Db.of(this.orm).transaction((db) => requestOrganizationDeletion(db, organizationId));
  }

  /** Records the deletion of a test organization's data (data-deletion.ts), or answers the one under way. */
  requestTestDataDeletion(testOrganizationId: string): Promise<RequestedDeletion> {
    return Db.of(this.orm).transaction((db) => requestTestDataDeletion(db, testOrganizationId));
  }

  /** The latest deletion of this kind of the organization (its receipt outlives the organization), or undefined. */
  latestDeletion(organizationId: string, kind: DeletionKind): Promise<DeletionRecord | undefined> {
    if (!isUuid(organizationId)) return Promise.resolve(undefined);
    return latestDeletion(Db.of(this.orm), organizationId, kind);
  }

  findDeletion(organizationId: string, id: string): Promise<DeletionRecord | undefined> {
    return findDeletion(Db.of(this.orm), organizationId, id);
  }

  /** The organization's retention of clicks in days; null keeps them; undefined when there is no such organization. */
  async clickRetentionDays(organizationId: string): Promise<number | null | undefined> {
    const row = await kyselyOf(this.orm)
      .selectFrom('organizations')
      .select('click_retention_days')
      .where('id', '=', organizationId)
      .executeTakeFirst();
    return row === undefined ? undefined : (row.click_retention_days ?? null);
  }

  async setClickRetentionDays(organizationId: string, days: number | null): Promise<void> {
    await kyselyOf(this.orm)
      .updateTable('organizations')
      .set({ click_retention_days: days })
      .where('id', '=', organizationId)
      .execute();
  }
}
