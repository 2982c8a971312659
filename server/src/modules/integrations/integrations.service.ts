import { randomUUID } from 'node:crypto';
import type { InferEntity } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { WEBHOOK_PROVIDERS, type Integration, type WebhookProvider } from '@affiliate-attribution/contract';
import { Sql } from '../../db/sql.js';
import { NotFoundError } from '../../http/errors.js';
import { iso, isUuid } from '../../http/serialize.js';
import type { IntegrationEntity } from './integration.entity.js';
import { echoInput } from '../../http/validation-message.js';

export type IntegrationRecord = InferEntity<typeof IntegrationEntity>;

export const isWebhookProvider = (value: string): value is WebhookProvider => (WEBHOOK_PROVIDERS as readonly string[]).includes(value);

export function requireProvider(value: string): WebhookProvider {
  if (!isWebhookProvider(value)) throw new NotFoundError(`Unknown provider: ${echoInput(value)}. Supported: ${WEBHOOK_PROVIDERS.join(', ')}`);
  return value;
}

function toIntegrationDto(organizationId: string, provider: WebhookProvider, row: IntegrationRecord | undefined): Integration {
  return {
    provider,
    configured: row !== undefined,
    webhook_path: `/webhooks/${provider}/${organizationId}`,
    updated_at: row ? iso(row.updated_at) : null,
  };
}

/**
 * One webhook signing secret per (organization, provider). The secret must be kept in a form the
 * HMAC can use, so it is stored as given; it is write-only through the API.
 */
export class IntegrationsService {
  constructor(private readonly orm: MikroORM) {}

  private sql(): Sql {
    return Sql.of(this.orm);
  }

  async list(organizationId: string): Promise<Integration[]> {
    const rows = await this.sql().rows<IntegrationRecord>('select * from integrations where organization_id = ?', [organizationId]);
    return WEBHOOK_PROVIDERS.map((provider) =>
      toIntegrationDto(
        organizationId,
        provider,
        rows.find((r) => r.provider === provider),
      ),
    );
  }

  async put(organizationId: string, providerName: string, signingSecret: string): Promise<Integration> {
    const provider = requireProvider(providerName);
    const now = new Date();
    const row = await this.sql().one<IntegrationRecord>(
      `insert into integrations (id, organization_id, provider, signing_secret, created_at, updated_at)
        values (?, ?, ?, ?, ?, ?)
        on conflict (organization_id, provider) do update set signing_secret = excluded.signing_secret, updated_at = excluded.updated_at
        returning *`,
      [randomUUID(), organizationId, provider, signingSecret, now, now],
    );
    return toIntegrationDto(organizationId, provider, row);
  }

  async remove(organizationId: string, providerName: string): Promise<Integration> {
    const provider = requireProvider(providerName);
    await this.sql().rows('delete from integrations where organization_id = ? and provider = ?', [organizationId, provider]);
    return toIntegrationDto(organizationId, provider, undefined);
  }

  /** The secret webhooks of this provider are verified with; undefined when none is stored. */
  async signingSecret(organizationId: string, provider: WebhookProvider): Promise<string | undefined> {
    if (!isUuid(organizationId)) return undefined;
    const row = await this.sql().one<{ signing_secret: string }>(
      'select signing_secret from integrations where organization_id = ? and provider = ?',
      [organizationId, provider],
    );
    return row?.signing_secret;
  }
}
