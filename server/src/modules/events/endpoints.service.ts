import type { OutboundEventType, WebhookDeliveryStatus } from '@affiliate-attribution/contract';
import type { WebhookDelivery, WebhookEndpoint } from '../../resources.js';
import { BadRequestError, ConflictError } from '../../http/errors.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { iso, isoOrNull } from '../../http/serialize.js';
import { SECRET_PURPOSE, type SecretBox } from '../../security/secret-box.js';
import type { DeliveryRecord, EndpointChanges, EndpointRecord, EndpointsRepository } from './endpoints.repository.js';
import { newEndpointSecret, webhookIdOf } from './signing.js';
import type { UrlGuard } from './url-guard.js';
import { newRowId } from '../../db/row-ids.js';

/** How long the previous secret signs alongside a rotated one. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

export function toEndpointDto(e: EndpointRecord, now: Date = new Date()): WebhookEndpoint {
  const previousUntil = e.previous_secret_expires_at ? new Date(e.previous_secret_expires_at) : null;
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.events,
    enabled: e.enabled,
    disabled_reason: e.disabled_reason,
    secret_rotated_at: isoOrNull(e.secret_rotated_at),
    previous_secret_expires_at: previousUntil && previousUntil > now ? previousUntil.toISOString() : null,
    created_at: iso(e.created_at),
    updated_at: iso(e.updated_at),
  };
}

export function toDeliveryDto(d: DeliveryRecord): WebhookDelivery {
  return {
    id: d.id,
    endpoint_id: d.endpoint_id,
    event_id: webhookIdOf(d.event_id),
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    last_response_status: d.last_response_status,
    last_response_body: d.last_response_body,
    last_error: d.last_error,
    last_attempt_at: isoOrNull(d.last_attempt_at),
    next_attempt_at: d.status === 'pending' ? isoOrNull(d.next_attempt_at) : null,
    created_at: iso(d.created_at),
  };
}

const unique = (events: readonly OutboundEventType[]): OutboundEventType[] => [...new Set(events)];

/** Merchants' webhook endpoints: registration (URL rules, secrets shown once), rotation, the delivery log. */
export class EndpointsService {
  constructor(
    private readonly endpoints: EndpointsRepository,
    private readonly secrets: SecretBox,
    private readonly urls: UrlGuard,
  ) {}

  private async checkUrl(url: string): Promise<void> {
    const problem = await this.urls.problem(url);
    if (problem) throw new BadRequestError(`url: ${problem}`);
  }

  async create(
    organizationId: string,
    input: { url: string; events: OutboundEventType[]; description?: string },
  ): Promise<{ webhook_endpoint: WebhookEndpoint; secret: string }> {
    await this.checkUrl(input.url);
    const secret = newEndpointSecret();
    const row = await this.endpoints.insert({
      id: newRowId(),
      organization_id: organizationId,
      url: input.url,
      description: input.description ?? null,
      events: unique(input.events),
      secret: this.secrets.seal(secret, SECRET_PURPOSE.webhookEndpoint),
    });
    return { webhook_endpoint: toEndpointDto(row), secret };
  }

  async list(
    organizationId: string,
    query: { limit?: number; cursor?: string },
  ): Promise<{ webhook_endpoints: WebhookEndpoint[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const rows = await this.endpoints.page(organizationId, decodeCursor(query.cursor), limit);
    const page = pageOf(rows, limit, (e) => ({ at: new Date(e.created_at), id: e.id }));
    return { webhook_endpoints: page.items.map((e) => toEndpointDto(e)), next_cursor: page.next_cursor };
  }

  async get(organizationId: string, id: string): Promise<WebhookEndpoint> {
    return toEndpointDto(await this.endpoints.findOwned(organizationId, id));
  }

  async update(organizationId: string, id: string, changes: EndpointChanges): Promise<WebhookEndpoint> {
    await this.endpoints.findOwned(organizationId, id);
    if (changes.url !== undefined) await this.checkUrl(changes.url);
    return toEndpointDto(
      await this.endpoints.update(organizationId, id, { ...changes, events: changes.events && unique(changes.events) }),
    );
  }

  async delete(organizationId: string, id: string): Promise<WebhookEndpoint> {
    return toEndpointDto(await this.endpoints.delete(organizationId, id));
  }

  async rotateSecret(
    organizationId: string,
    id: string,
  ): Promise<{ webhook_endpoint: WebhookEndpoint; secret: string }> {
    const secret = newEndpointSecret();
    const row = await this.endpoints.rotate(
      organizationId,
      id,
      this.secrets.seal(secret, SECRET_PURPOSE.webhookEndpoint),
      new Date(Date.now() + PREVIOUS_SECRET_GRACE_MS),
    );
    return { webhook_endpoint: toEndpointDto(row), secret };
  }

  async deliveries(
    organizationId: string,
    id: string,
    query: { limit?: number; cursor?: string; status?: WebhookDeliveryStatus },
  ): Promise<{ deliveries: WebhookDelivery[]; next_cursor: string | null }> {
    const endpoint = await this.endpoints.findOwned(organizationId, id);
    const limit = pageLimit(query.limit);
    const rows = await this.endpoints.deliveries(
      endpoint.organization_id,
      endpoint.id,
      query.status,
      decodeCursor(query.cursor),
      limit,
    );
    const page = pageOf(rows, limit, (d) => ({ at: new Date(d.created_at), id: d.id }));
    return { deliveries: page.items.map(toDeliveryDto), next_cursor: page.next_cursor };
  }

  async retryDelivery(organizationId: string, id: string): Promise<WebhookDelivery> {
    const { delivery, endpointEnabled } = await this.endpoints.requeue(organizationId, id);
    if (!endpointEnabled) throw new ConflictError('The endpoint is disabled: enable it first');
    return toDeliveryDto(delivery);
  }
}
