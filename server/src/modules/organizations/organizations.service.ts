import type {
  ApiKeyInfo,
  DataRetention,
  Mode,
  Organization,
  UpdateDataRetentionBody,
} from '@affiliate-attribution/contract';
import { LRUCache } from 'lru-cache';
import { ForbiddenError, NotFoundError, ServiceUnavailableError } from '../../http/errors.js';
import type { OrganizationContext } from '../../http/organization-context.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { iso, isoOrNull } from '../../http/serialize.js';
import { generateApiKey, hashApiKey, redactApiKey } from './api-key.js';
import type { ApiKeyRecord, OrganizationsRepository } from './organizations.repository.js';
import { newRowId } from '../../db/row-ids.js';
import type { CacheChange } from '../../db/change-notifications.js';
import type { DeletionRecord } from './data-deletion.js';
import type { DeletionRunner } from './deletion-runner.js';

const toApiKeyInfo = (row: ApiKeyRecord): ApiKeyInfo => ({
  id: row.id,
  redacted: row.redacted,
  mode: row.livemode ? 'live' : 'test',
  created_at: iso(row.created_at),
  revoked_at: isoOrNull(row.revoked_at),
});

export interface IssuedApiKey {
  api_key: string;
  api_key_info: ApiKeyInfo;
}

/** A new key of the organization (a test key when it is a test twin): the plain key (shown once, never stored) and the row that stores its hash. */
function newApiKey(
  organizationId: string,
  mode: Mode,
): { issued: IssuedApiKey; row: Omit<ApiKeyRecord, 'livemode'> & { key_hash: string } } {
  const key = generateApiKey(mode);
  const row = {
    id: newRowId(),
    organization_id: organizationId,
    key_hash: hashApiKey(key),
    redacted: redactApiKey(key),
    created_at: new Date(),
    revoked_at: null,
  };
  return { issued: { api_key: key, api_key_info: toApiKeyInfo({ ...row, livemode: mode === 'live' }) }, row };
}

export interface CreatedOrganization extends IssuedApiKey {
  organization: Organization;
  test_api_key: string;
  test_api_key_info: ApiKeyInfo;
}

export class OrganizationsService {
  /** Live organization -> its test twin: fixed for the organization's life (deleted only with it). */
  private readonly twins = new LRUCache<string, string>({ max: 10_000 });

  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly deletions: Pick<DeletionRunner, 'enqueue'>,
  ) {}

  /** A live organization with its test twin (same name) and a key for each, in one transaction. */
  async create(name: string): Promise<CreatedOrganization> {
    const created_at = new Date();
    const organization = { id: newRowId(), name };
    const twin = { id: newRowId(), name, live_organization_id: organization.id, created_at };
    const live = newApiKey(organization.id, 'live');
    const test = newApiKey(twin.id, 'test');
    await this.organizations.insertWithTwin({ ...organization, created_at }, twin, [live.row, test.row]);
    this.twins.set(organization.id, twin.id);
    return {
      organization: { ...organization, livemode: true },
      ...live.issued,
      test_api_key: test.issued.api_key,
      test_api_key_info: test.issued.api_key_info,
    };
  }

  /**
   * A new key of the account (a live organization): on the organization itself for `live`, on its
   * test twin for `test`. 404 when there is no such live organization.
   */
  async issueKey(accountId: string, mode: Mode = 'live'): Promise<IssuedApiKey> {
    await this.requireOrganization(accountId);
    const organizationId = mode === 'live' ? accountId : await this.testOrganizationOf(accountId);
    const key = newApiKey(organizationId, mode);
    await this.organizations.insertKey(key.row);
    return key.issued;
  }

  /** A page of the account's keys of both modes, or of `mode`, oldest first (the dashboard's Developers page; GET /api/api-keys). */
  async pageKeys(
    accountId: string,
    query: { cursor?: string | undefined; limit?: number | undefined; mode?: Mode | undefined },
  ): Promise<{ api_keys: ApiKeyInfo[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const page = pageOf(
      await this.organizations.keysAfter(accountId, query.mode, decodeCursor(query.cursor), limit),
      limit,
      (k) => ({ at: k.created_at, id: k.id }),
    );
    return { api_keys: page.items.map(toApiKeyInfo), next_cursor: page.next_cursor };
  }

  /** The account's keys of both modes (the operator's listing). */
  async listKeys(accountId: string): Promise<ApiKeyInfo[]> {
    await this.requireOrganization(accountId);
    return (await this.organizations.listKeys(accountId)).map(toApiKeyInfo);
  }

  /** The test twin of a live organization (cached: it never changes). 404 when there is no such live organization. */
  async testOrganizationOf(liveOrganizationId: string): Promise<string> {
    const cached = this.twins.get(liveOrganizationId);
    if (cached) return cached;
    const twin = await this.organizations.testOrganizationOf(liveOrganizationId);
    if (!twin) throw new NotFoundError('Organization not found');
    this.twins.set(liveOrganizationId, twin);
    return twin;
  }

  /**
   * The organization a public request with `"mode": "test"` writes to, for the id in its path
   * (organizations.repository.ts testDataOf): the twin of a live organization (cached), else the
   * id as it is, so that an unknown organization is answered as in live mode.
   */
  async testDataOf(organizationId: string): Promise<string> {
    const cached = this.twins.get(organizationId);
    if (cached) return cached;
    const target = await this.organizations.testDataOf(organizationId);
    if (target !== organizationId) this.twins.set(organizationId, target);
    return target;
  }

  /** Whether an organization is live (true) or a test twin (false); undefined when there is none. */
  modeOf(organizationId: string): Promise<boolean | undefined> {
    return this.organizations.modeOf(organizationId);
  }

  /** What a dashboard session acts as: the live organization, or its test twin (X-Mode: test). */
  contextOf(liveOrganizationId: string, livemode: boolean): Promise<OrganizationContext | undefined> {
    return this.organizations.contextOf(liveOrganizationId, livemode);
  }

  /**
   * Deletes every test row of the request's organization (DELETE /api/test-data), keeping the
   * test organization's settings (organization-data.ts, TEST_DATA_KEPT), as a job in batches
   * (deletion-runner.ts), joining the one under way if any; waits up to `waitMs` for it to finish
   * and answers it as it is then (finished, or still running: the caller answers 202). 403 in
   * live mode; 503 when the job gave up (it may be asked for again).
   */
  async deleteTestData(organization: OrganizationContext, waitMs: number): Promise<DeletionRecord> {
    this.requireTestMode(organization);
    const { deletion } = await this.organizations.requestTestDataDeletion(organization.id);
    await this.deletions.enqueue(deletion);
    let current = deletion;
    const deadline = Date.now() + waitMs;
    while (!current.finished_at && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      current = (await this.organizations.findDeletion(deletion.organization_id, deletion.id)) ?? current;
    }
    if (current.status === 'failed')
      throw new ServiceUnavailableError(
        `The test data could not be deleted (${current.error ?? 'unknown error'}); ask again to go on`,
      );
    return current;
  }

  /** The latest deletion of the request's test data (GET /api/test-data/deletion); 403 in live mode, 404 when there was none. */
  async testDataDeletion(organization: OrganizationContext): Promise<DeletionRecord> {
    this.requireTestMode(organization);
    const found = await this.organizations.latestDeletion(organization.id, 'test_data');
    if (!found) throw new NotFoundError('No deletion of test data has been asked for');
    return found;
  }

  private requireTestMode(organization: OrganizationContext): void {
    if (organization.livemode)
      throw new ForbiddenError(
        'Test data can only be deleted with a test API key (svc_test_…) or in test mode: this request is in live mode, and live data is never deleted here',
      );
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
   * Deletes the organization, its test twin and everything they own (data-deletion.ts): at once
   * the organization is unusable (keys revoked, sessions ended, caches told) and its deletion
   * recorded; the rows go in batches by a job (deletion-runner.ts). A repeat while it runs answers
   * the same deletion. 404 when there is no such live organization (one already deleted included).
   * Answers the changes for this instance's caches (every instance hears of them on commit).
   */
  async requestDeletion(organizationId: string): Promise<{ deletion: DeletionRecord; changes: CacheChange[] }> {
    const requested = await this.organizations.requestDeletion(organizationId);
    if (!requested) throw new NotFoundError('Organization not found');
    this.twins.delete(organizationId);
    await this.deletions.enqueue(requested.deletion);
    return { deletion: requested.deletion, changes: requested.changes };
  }

  /** The organization's deletion (GET /admin/organizations/{id}/deletion), also once the organization is gone; 404 when none was asked for. */
  async deletionOf(organizationId: string): Promise<DeletionRecord> {
    const found = await this.organizations.latestDeletion(organizationId, 'organization');
    if (!found) throw new NotFoundError('No deletion of this organization has been asked for');
    return found;
  }

  async dataRetention(organizationId: string): Promise<DataRetention> {
    return { click_retention_days: (await this.organizations.clickRetentionDays(organizationId)) ?? null };
  }

  async setDataRetention(organizationId: string, input: UpdateDataRetentionBody): Promise<DataRetention> {
    await this.organizations.setClickRetentionDays(organizationId, input.click_retention_days);
    return this.dataRetention(organizationId);
  }

  /** The organization of a valid, unrevoked key hash (with its mode and account), or undefined. */
  findByKeyHash(keyHash: string): Promise<OrganizationContext | undefined> {
    return this.organizations.findByKeyHash(keyHash);
  }

  private async requireOrganization(organizationId: string): Promise<void> {
    if (!(await this.organizations.exists(organizationId))) throw new NotFoundError('Organization not found');
  }
}
