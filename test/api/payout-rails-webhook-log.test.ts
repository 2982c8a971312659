import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError } from '../support/api.js';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';
import { WiseStandIn } from '../support/rails/wise-standin.js';
import {
  merchantWithPendingPayout,
  payout,
  postWebhook,
  sendsSettled,
  settingsForFile,
  type Merchant,
} from './payout-rails.support.js';

/*
 * The PayPal and Wise payout webhooks in the log of received webhooks (GET /api/integrations/events),
 * like the payment providers': each verified event with its outcome, deduplicated by event id (a
 * replay answers `duplicate` and changes nothing), each refusal counted under its reason.
 */
let paypal: PayPalStandIn;
let wise: WiseStandIn;
settingsForFile(
  async () => {
    paypal = await new PayPalStandIn().start();
    wise = await new WiseStandIn().start();
    return {
      PAYPAL_API_BASE_URL: paypal.baseUrl,
      WISE_API_BASE_URL: wise.baseUrl,
      WISE_WEBHOOK_PUBLIC_KEY: wise.publicKeyPem,
    };
  },
  async () => {
    await paypal.stop();
    await wise.stop();
  },
);

async function logOf(m: Merchant, query = '') {
  const res = await m.api.get(`/api/integrations/events${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.webhook_events;
}

describe('PayPal payout webhooks in the log of received webhooks', () => {
  it('a processed event is listed with its id and type; its replay answers duplicate, changes nothing and is not listed again', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 21, { payout_email: 'jane.paypal@example.com' });
    expect(
      (
        await m.api.put('/api/integrations/paypal_payouts', {
          client_id: paypal.clientId,
          client_secret: paypal.clientSecret,
          environment: 'sandbox',
          webhook_id: paypal.webhookId,
        })
      ).status,
    ).toBe(200);
    expect((await m.api.post('/api/payouts/send', { payout_ids: [p.id] })).status).toBe(202);
    await sendsSettled();

    // An event that changes nothing: listed as ignored, with the reason.
    paypal.setItem(p.id, 'UNCLAIMED');
    const unclaimed = paypal.webhookFor(p.id, 'UNCLAIMED');
    const first = await postWebhook(`/webhooks/paypal/${m.id}`, unclaimed.body, unclaimed.headers);
    expect(first.body.data.webhook.outcome).toBe('ignored');

    paypal.setItem(p.id, 'SUCCESS');
    const hook = paypal.webhookFor(p.id, 'SUCCEEDED');
    const eventId = JSON.parse(hook.body).id as string;
    const res = await postWebhook(`/webhooks/paypal/${m.id}`, hook.body, hook.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.webhook).toEqual({
      provider: 'paypal_payouts',
      event_id: eventId,
      event_type: 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED',
      outcome: 'processed',
      detail: `Payout ${p.id} paid`,
    });
    const paid = await payout(m, p.id);
    expect(paid.status).toBe('paid');

    const again = await postWebhook(`/webhooks/paypal/${m.id}`, hook.body, hook.headers);
    expect(again.status).toBe(200);
    expect(again.body.data.webhook).toEqual({
      provider: 'paypal_payouts',
      event_id: eventId,
      event_type: 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED',
      outcome: 'duplicate',
      detail: 'Event already handled; nothing changed',
    });
    expect(await payout(m, p.id)).toEqual(paid);

    const log = await logOf(m, '?provider=paypal_payouts');
    expect(log).toEqual([
      {
        provider: 'paypal_payouts',
        outcome: 'processed',
        event_id: eventId,
        event_type: 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED',
        detail: res.body.data.webhook.detail,
        requests: 1,
        first_received_at: expect.any(String),
        received_at: expect.any(String),
        livemode: true,
      },
      {
        provider: 'paypal_payouts',
        outcome: 'ignored',
        event_id: JSON.parse(unclaimed.body).id,
        event_type: 'PAYMENT.PAYOUTS-ITEM.UNCLAIMED',
        detail: first.body.data.webhook.detail,
        requests: 1,
        first_received_at: expect.any(String),
        received_at: expect.any(String),
        livemode: true,
      },
    ]);
    expect((await logOf(m, '?provider=paypal_payouts&outcome=processed')).map((e: any) => e.event_id)).toEqual([
      eventId,
    ]);
    expect(await logOf(m, '?provider=wise')).toEqual([]);
  });

  it('a request PayPal does not verify is refused (400) and counted under its reason; nothing of it is kept', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 9, { payout_email: 'jane.paypal@example.com' });
    // No integration yet: refused and counted.
    expectError(
      await postWebhook(`/webhooks/paypal/${m.id}`, '{"id":"WH-1"}', { 'content-type': 'application/json' }),
      400,
      'No paypal_payouts integration is configured for this organization (PUT /api/integrations/paypal_payouts)',
    );
    expect(
      (
        await m.api.put('/api/integrations/paypal_payouts', {
          client_id: paypal.clientId,
          client_secret: paypal.clientSecret,
          environment: 'sandbox',
          webhook_id: paypal.webhookId,
        })
      ).status,
    ).toBe(200);
    expect((await m.api.post('/api/payouts/send', { payout_ids: [p.id] })).status).toBe(202);
    await sendsSettled();
    paypal.setItem(p.id, 'SUCCESS');
    const genuine = paypal.webhookFor(p.id, 'SUCCEEDED');
    const forged = { ...genuine.headers, 'paypal-transmission-sig': 'Zm9yZ2Vk' };
    for (let i = 0; i < 2; i++)
      expectError(
        await postWebhook(`/webhooks/paypal/${m.id}`, genuine.body, forged),
        400,
        'Invalid PayPal webhook signature: PayPal did not verify it (verify-webhook-signature)',
      );
    expect((await payout(m, p.id)).status).toBe('processing');

    const rejected = await logOf(m, '?outcome=rejected');
    expect(rejected).toEqual([
      {
        provider: 'paypal_payouts',
        outcome: 'rejected',
        event_id: null,
        event_type: null,
        detail: 'Invalid PayPal webhook signature: PayPal did not verify it (verify-webhook-signature)',
        requests: 2,
        first_received_at: expect.any(String),
        received_at: expect.any(String),
        livemode: true,
      },
      {
        provider: 'paypal_payouts',
        outcome: 'rejected',
        event_id: null,
        event_type: null,
        detail:
          'No paypal_payouts integration is configured for this organization (PUT /api/integrations/paypal_payouts)',
        requests: 1,
        first_received_at: expect.any(String),
        received_at: expect.any(String),
        livemode: true,
      },
    ]);
    expect(JSON.stringify(rejected)).not.toContain(JSON.parse(genuine.body).id);
  });
});

describe('Wise payout webhooks in the log of received webhooks', () => {
  it('a signed state change is listed; the same delivery again answers duplicate; a forged one is counted as rejected', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('wise', 30, { payout_email: 'jane.wise@example.com' });
    expect(
      (
        await m.api.put('/api/integrations/wise', {
          api_token: wise.apiToken,
          profile_id: wise.profileId,
          environment: 'sandbox',
        })
      ).status,
    ).toBe(200);
    expect((await m.api.post('/api/payouts/send', { payout_ids: [p.id] })).status).toBe(202);
    await sendsSettled();
    const transfer = wise.transferOf(wise.transferRequests.at(-1).customerTransactionId);

    const forger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = wise.webhook(transfer.id, 'processing', 'outgoing_payment_sent', forger);
    expectError(
      await postWebhook(`/webhooks/wise/${m.id}`, forged.body, forged.headers),
      400,
      'Invalid X-Signature-SHA256: not signed by Wise',
    );

    wise.setStatus(transfer.id, 'outgoing_payment_sent');
    const hook = wise.webhook(transfer.id, 'processing', 'outgoing_payment_sent');
    const res = await postWebhook(`/webhooks/wise/${m.id}`, hook.body, hook.headers);
    expect(res.body.data.webhook).toEqual({
      provider: 'wise',
      event_id: hook.headers['x-delivery-id'],
      event_type: 'transfers#state-change',
      outcome: 'processed',
      detail: `Payout ${p.id} paid`,
    });
    expect((await payout(m, p.id)).status).toBe('paid');
    const again = await postWebhook(`/webhooks/wise/${m.id}`, hook.body, hook.headers);
    expect(again.body.data.webhook).toMatchObject({
      provider: 'wise',
      event_id: hook.headers['x-delivery-id'],
      outcome: 'duplicate',
      detail: 'Event already handled; nothing changed',
    });

    expect(await logOf(m, '?provider=wise')).toEqual([
      {
        provider: 'wise',
        outcome: 'processed',
        event_id: hook.headers['x-delivery-id'],
        event_type: 'transfers#state-change',
        detail: res.body.data.webhook.detail,
        requests: 1,
        first_received_at: expect.any(String),
        received_at: expect.any(String),
        livemode: true,
      },
      {
        provider: 'wise',
        outcome: 'rejected',
        event_id: null,
        event_type: null,
        detail: 'Invalid X-Signature-SHA256: not signed by Wise',
        requests: 1,
        first_received_at: expect.any(String),
        received_at: expect.any(String),
        livemode: true,
      },
    ]);
    // The filter takes the rails' names; another value is refused as before.
    expectError(await m.api.get('/api/integrations/events?provider=stripe_connect'), 400, /provider/);
  });
});
