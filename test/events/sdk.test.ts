import { describe, expect, it } from 'vitest';
import { PermissionDeniedError, NotFoundError } from '../../client-sdk/src/index.js';
import { sdkMerchant } from '../sdk/support.js';
import { rejection } from '../support/rejection.js';
import { testServer } from '../support/server.js';

describe('SDK against the live server: webhook endpoints', () => {
  it('create (secret once), list, get, update, rotate, deliveries, retry, delete', async () => {
    const { client, id: organizationId } = await sdkMerchant();
    const { webhook_endpoint: endpoint, secret } = await client.webhookEndpoints.create({
      url: 'http://127.0.0.1:9/hooks',
      events: ['conversion.created', 'payout.paid'],
    });
    expect(secret).toMatch(/^whsec_/);
    expect(endpoint).toMatchObject({
      url: 'http://127.0.0.1:9/hooks',
      events: ['conversion.created', 'payout.paid'],
      enabled: true,
      disabled_reason: null,
    });
    expect((await client.webhookEndpoints.get(endpoint.id)).webhook_endpoint).toEqual(endpoint);
    const ids: string[] = [];
    for await (const e of client.webhookEndpoints.list({ limit: 1 })) ids.push(e.id);
    expect(ids).toEqual([endpoint.id]);
    const { webhook_endpoint: updated } = await client.webhookEndpoints.update(endpoint.id, {
      enabled: false,
      description: 'paused',
    });
    expect(updated).toMatchObject({ enabled: false, description: 'paused' });
    const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id);
    expect(rotated.secret).not.toBe(secret);

    // A delivery in the log (no delivery worker runs on this server: written as the relay would).
    const { db } = await testServer();
    const [delivery] = await db.orm.em
      .fork()
      .getConnection()
      .execute(
        `with ev as (insert into outbound_events (id, organization_id, type, resource) values (gen_random_uuid(), ?, 'conversion.created', '{}'::jsonb) returning id)
       insert into webhook_deliveries (id, organization_id, endpoint_id, event_id) select gen_random_uuid(), ?, ?, id from ev returning id`,
        [organizationId, organizationId, endpoint.id],
      );
    const page = await client.webhookEndpoints.deliveries(endpoint.id);
    expect(page.data.map((d) => d.id)).toEqual([delivery.id]);
    expect(page.data[0]).toMatchObject({ event_type: 'conversion.created', status: 'pending', attempts: 0 });
    await client.webhookEndpoints.update(endpoint.id, { enabled: true });
    expect((await client.webhookEndpoints.retryDelivery(delivery.id)).delivery.id).toBe(delivery.id);

    const other = await sdkMerchant();
    expect(await rejection(other.client.webhookEndpoints.get(endpoint.id))).toBeInstanceOf(PermissionDeniedError);
    await client.webhookEndpoints.delete(endpoint.id);
    expect(await rejection(client.webhookEndpoints.get(endpoint.id))).toBeInstanceOf(NotFoundError);
  });
});
