import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ApiKeyInfo, Organization } from '@affiliate-attribution/contract';
import { notifyChange } from '../../db/change-notifications.js';
import { Sql } from '../../db/sql.js';
import { NotFoundError } from '../../http/errors.js';
import { iso, isoOrNull, isUuid } from '../../http/serialize.js';
import { generateApiKey, hashApiKey, redactApiKey } from './api-key.js';

interface ApiKeyRow {
  id: string;
  organization_id: string;
  redacted: string;
  created_at: Date | string;
  revoked_at: Date | string | null;
}

const toApiKeyInfo = (row: ApiKeyRow): ApiKeyInfo => ({
  id: row.id,
  redacted: row.redacted,
  created_at: iso(row.created_at),
  revoked_at: isoOrNull(row.revoked_at),
});

export interface IssuedApiKey {
  api_key: string;
  api_key_info: ApiKeyInfo;
}

export class OrganizationsService {
  constructor(private readonly orm: MikroORM) {}

  private sql(): Sql {
    return Sql.of(this.orm);
  }

  async create(name: string): Promise<{ organization: Organization } & IssuedApiKey> {
    return this.sql().transaction(async (sql) => {
      const id = randomUUID();
      await sql.rows('insert into organizations (id, name, created_at) values (?, ?, ?)', [id, name, new Date()]);
      const issued = await this.insertKey(sql, id);
      return { organization: { id, name }, ...issued };
    });
  }

  async issueKey(organizationId: string): Promise<IssuedApiKey> {
    const sql = this.sql();
    await this.requireOrganization(sql, organizationId);
    return this.insertKey(sql, organizationId);
  }

  async listKeys(organizationId: string): Promise<ApiKeyInfo[]> {
    const sql = this.sql();
    await this.requireOrganization(sql, organizationId);
    const rows = await sql.rows<ApiKeyRow>(
      'select id, organization_id, redacted, created_at, revoked_at from api_keys where organization_id = ? order by created_at, id',
      [organizationId],
    );
    return rows.map(toApiKeyInfo);
  }

  /**
   * Revokes a key (again: a no-op). Every instance caches keys (http/authentication.ts): the change
   * notification goes out in the revocation's transaction, so every instance drops the key once it
   * commits; the caller drops it on this instance (admin.router.ts) with the returned key_hash.
   */
  async revokeKey(organizationId: string, keyId: string): Promise<ApiKeyInfo & { key_hash: string }> {
    if (!isUuid(organizationId) || !isUuid(keyId)) throw new NotFoundError('API key not found');
    const row = await this.sql().transaction(async (sql) => {
      const revoked = await sql.one<ApiKeyRow & { key_hash: string }>(
        `update api_keys set revoked_at = coalesce(revoked_at, ?)
          where organization_id = ? and id = ?
          returning id, organization_id, redacted, created_at, revoked_at, key_hash`,
        [new Date(), organizationId, keyId],
      );
      if (revoked) await notifyChange((query, params) => sql.rows(query, params), { kind: 'api_key', keyHash: revoked.key_hash });
      return revoked;
    });
    if (!row) throw new NotFoundError('API key not found');
    return { ...toApiKeyInfo(row), key_hash: row.key_hash };
  }

  /** The organization of a valid, unrevoked key hash, or undefined. */
  async findByKeyHash(keyHash: string): Promise<Organization | undefined> {
    return this.sql().one<Organization>(
      `select o.id, o.name from api_keys k join organizations o on o.id = k.organization_id
        where k.key_hash = ? and k.revoked_at is null`,
      [keyHash],
    );
  }

  private async requireOrganization(sql: Sql, organizationId: string): Promise<void> {
    const found = isUuid(organizationId) && (await sql.one('select 1 from organizations where id = ?', [organizationId]));
    if (!found) throw new NotFoundError('Organization not found');
  }

  private async insertKey(sql: Sql, organizationId: string): Promise<IssuedApiKey> {
    const key = generateApiKey();
    const row: ApiKeyRow = {
      id: randomUUID(),
      organization_id: organizationId,
      redacted: redactApiKey(key),
      created_at: new Date(),
      revoked_at: null,
    };
    await sql.rows('insert into api_keys (id, organization_id, key_hash, redacted, created_at) values (?, ?, ?, ?, ?)', [
      row.id,
      organizationId,
      hashApiKey(key),
      row.redacted,
      row.created_at,
    ]);
    return { api_key: key, api_key_info: toApiKeyInfo(row) };
  }
}
