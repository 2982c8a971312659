import type { ApiKeyInfo, DataRetention, Organization, UpdateDataRetentionBody } from '@affiliate-attribution/contract';
import { NotFoundError } from '../../http/errors.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { iso, isoOrNull } from '../../http/serialize.js';
import { generateApiKey, hashApiKey, redactApiKey } from './api-key.js';
import type { ApiKeyRecord, OrganizationsRepository } from './organizations.repository.js';
import { newRowId } from '../../db/row-ids.js';

const toApiKeyInfo = (row: ApiKeyRecord): ApiKeyInfo => ({
  id: row.id,
  redacted: row.redacted,
  created_at: iso(row.created_at),
  revoked_at: isoOrNull(row.revoked_at),
});

export interface IssuedApiKey {
  api_key: string;
  api_key_info: ApiKeyInfo;
}

/** A new key of the organization: the plain key (shown once, never stored) and the row that stores its hash. */
function newApiKey(organizationId: string): { issued: IssuedApiKey; row: ApiKeyRecord & { key_hash: string } } {
  const key = generateApiKey();
  const row = { id: newRowId(), organization_id: organizationId, key_hash: hashApiKey(key), redacted: redactApiKey(key), created_at: new Date(), revoked_at: null };
  return { issued: { api_key: key, api_key_info: toApiKeyInfo(row) }, row };
}

export class OrganizationsService {
  constructor(private readonly organizations: OrganizationsRepository) {}

  async create(name: string): Promise<{ organization: Organization } & IssuedApiKey> {
    const organization = { id: newRowId(), name };
    const key = newApiKey(organization.id);
    await this.organizations.insertWithKey({ ...organization, created_at: new Date() }, key.row);
    return { organization, ...key.issued };
  }

  async issueKey(organizationId: string): Promise<IssuedApiKey> {
    await this.requireOrganization(organizationId);
    const key = newApiKey(organizationId);
    await this.organizations.insertKey(key.row);
    return key.issued;
  }

  /** A page of the keys, oldest first (the dashboard's Developers page; GET /api/api-keys). */
  async pageKeys(organizationId: string, query: { cursor?: string | undefined; limit?: number | undefined }): Promise<{ api_keys: ApiKeyInfo[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const page = pageOf(await this.organizations.keysAfter(organizationId, decodeCursor(query.cursor), limit), limit, (k) => ({ at: k.created_at, id: k.id }));
    return { api_keys: page.items.map(toApiKeyInfo), next_cursor: page.next_cursor };
  }

  async listKeys(organizationId: string): Promise<ApiKeyInfo[]> {
    await this.requireOrganization(organizationId);
    return (await this.organizations.listKeys(organizationId)).map(toApiKeyInfo);
  }

  /**
   * Revokes a key (again: a no-op). Every instance caches keys (http/authentication.ts): the
   * repository notifies every instance in the revocation's transaction; the caller drops the key
   * on this instance (admin.router.ts) with the returned key_hash.
   */
  async revokeKey(organizationId: string, keyId: string): Promise<ApiKeyInfo & { key_hash: string }> {
    const row = await this.organizations.revokeKey(organizationId, keyId, new Date());
    if (!row) throw new NotFoundError('API key not found');
    return { ...toApiKeyInfo(row), key_hash: row.key_hash };
  }

  /**
   * Deletes the organization and everything it owns (organization-data.ts), all or nothing; 404
   * when there is none. Every instance drops its keys when the deletion commits; the caller drops
   * them on this instance (admin.router.ts) with the returned key hashes.
   */
  async deleteWithEverything(organizationId: string): Promise<{ deleted: Record<string, number>; keyHashes: string[] }> {
    const result = await this.organizations.deleteWithEverything(organizationId);
    if (!result) throw new NotFoundError('Organization not found');
    return result;
  }

  async dataRetention(organizationId: string): Promise<DataRetention> {
    return { click_retention_days: (await this.organizations.clickRetentionDays(organizationId)) ?? null };
  }

  async setDataRetention(organizationId: string, input: UpdateDataRetentionBody): Promise<DataRetention> {
    await this.organizations.setClickRetentionDays(organizationId, input.click_retention_days);
    return this.dataRetention(organizationId);
  }

  /** The organization of a valid, unrevoked key hash, or undefined. */
  findByKeyHash(keyHash: string): Promise<Organization | undefined> {
    return this.organizations.findByKeyHash(keyHash);
  }

  private async requireOrganization(organizationId: string): Promise<void> {
    if (!(await this.organizations.exists(organizationId))) throw new NotFoundError('Organization not found');
  }
}
