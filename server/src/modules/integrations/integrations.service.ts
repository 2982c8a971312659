import { WEBHOOK_PROVIDERS, type WebhookProvider } from '@affiliate-attribution/contract';
import type { Integration } from '../../resources.js';
import { NotFoundError } from '../../http/errors.js';
import { iso, isUuid } from '../../http/serialize.js';
import { echoInput } from '../../http/validation-message.js';
import { SECRET_PURPOSE, SecretBox } from '../../security/secret-box.js';
import type { IntegrationRecord, IntegrationsRepository } from './integrations.repository.js';
import { newRowId } from '../../db/row-ids.js';


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
 * HMAC can use, so it is encrypted at rest under ENCRYPTION_KEY (security/secret-box.ts; stored as
 * given without a key); it is write-only through the API.
 */
export class IntegrationsService {
  constructor(
    private readonly integrations: IntegrationsRepository,
    private readonly secrets: SecretBox = new SecretBox(undefined),
  ) {}

  async list(organizationId: string): Promise<Integration[]> {
    const rows = await this.integrations.list(organizationId);
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
    const row = await this.integrations.upsert({ id: newRowId(), organization_id: organizationId, provider, signing_secret: this.secrets.seal(signingSecret, SECRET_PURPOSE.integration), created_at: now, updated_at: now });
    return toIntegrationDto(organizationId, provider, row);
  }

  async remove(organizationId: string, providerName: string): Promise<Integration> {
    const provider = requireProvider(providerName);
    await this.integrations.remove(organizationId, provider);
    return toIntegrationDto(organizationId, provider, undefined);
  }

  /** The secret webhooks of this provider are verified with; undefined when none is stored. */
  async signingSecret(organizationId: string, provider: WebhookProvider): Promise<string | undefined> {
    if (!isUuid(organizationId)) return undefined;
    const stored = await this.integrations.signingSecret(organizationId, provider);
    return stored === undefined ? undefined : this.secrets.open(stored, SECRET_PURPOSE.integration);
  }
}
