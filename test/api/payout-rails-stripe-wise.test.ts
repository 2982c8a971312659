import { createHmac, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError } from '../support/api.js';
import { StripeStandIn } from '../support/rails/stripe-standin.js';
import { WiseStandIn } from '../support/rails/wise-standin.js';
import {
  commissionStatuses,
  merchantWithPendingPayout,
  outboxEvents,
  payout,
  postWebhook,
  reconcileNow,
  sendsSettled,
  settingsForFile,
  type Merchant,
} from './payout-rails.support.js';

/*
 * Stripe Connect transfers and Wise transfers end to end, against local servers that speak the
 * documented APIs (test/support/rails/stripe-standin.ts, wise-standin.ts; the pages cited there).
 */
let stripe: StripeStandIn;
let wise: WiseStandIn;
settingsForFile(
  async () => {
    stripe = await new StripeStandIn().start();
    wise = await new WiseStandIn().start();
    return {
      STRIPE_API_BASE_URL: stripe.baseUrl,
      WISE_API_BASE_URL: wise.baseUrl,
      WISE_WEBHOOK_PUBLIC_KEY: wise.publicKeyPem,
    };
  },
  async () => {
    await stripe.stop();
    await wise.stop();
  },
);

const STRIPE_WEBHOOK_SECRET = 'whsec_payout_rails_0123456789';

function stripeEvent(type: string, object: unknown) {
  const body = JSON.stringify({
    id: `evt_${Math.random().toString(36).slice(2)}`,
    object: 'event',
    type,
    livemode: true,
    created: Math.floor(Date.now() / 1000),
    data: { object },
  });
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', STRIPE_WEBHOOK_SECRET).update(`${t}.${body}`).digest('hex');
  return { body, headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${v1}` } };
}

async function connectStripe(m: Merchant) {
  const res = await m.api.put('/api/integrations/stripe_connect', { secret_key: stripe.secretKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data.integration).toMatchObject({
    provider: 'stripe_connect',
    kind: 'payout_rail',
    configured: true,
    environment: 'sandbox',
    webhook_path: `/webhooks/stripe/${m.id}`,
  });
  expect((await m.api.put('/api/integrations/stripe', { signing_secret: STRIPE_WEBHOOK_SECRET })).status).toBe(200);
}

async function connectWise(m: Merchant) {
  const res = await m.api.put('/api/integrations/wise', {
    api_token: wise.apiToken,
    profile_id: wise.profileId,
    environment: 'sandbox',
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data.integration).toMatchObject({
    provider: 'wise',
    kind: 'payout_rail',
    configured: true,
    environment: 'sandbox',
    webhook_path: `/webhooks/wise/${m.id}`,
  });
}

describe('Stripe Connect transfers', () => {
  it('a transfer to the connected account, in minor units under the Idempotency-Key, pays the payout', async () => {
    const account = stripe.connect();
    const { m, payout: p } = await merchantWithPendingPayout('stripe', 42.5, { stripe_account_id: account });
    await connectStripe(m);
    const res = await m.api.post('/api/payouts/send', { payout_ids: [p.id] });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    // A transfer moves the money to the connected account when Stripe creates it: the answer, which waited for Stripe's, says paid.
    const transfer = stripe.transferOf(p.id);
    expect(res.body.data.payouts[0]).toMatchObject({
      status: 'paid',
      method: 'stripe',
      provider_reference: transfer.id,
    });
    expect(transfer).toMatchObject({
      amount: 4250,
      currency: 'usd',
      destination: account,
      transfer_group: `svc-payout-${p.id}`,
    });
    expect(await payout(m, p.id)).toMatchObject({ status: 'paid', provider_reference: transfer.id });
    expect(await commissionStatuses(m)).toEqual([{ status: 'paid', payout_id: p.id }]);
    // A reversal after payment leaves the paid payout as it is, and says so.
    const reversed = stripeEvent('transfer.reversed', stripe.reverse(transfer.id));
    const hook = await postWebhook(`/webhooks/stripe/${m.id}`, reversed.body, reversed.headers);
    expect(hook.status).toBe(200);
    expect(hook.body.data.webhook).toMatchObject({ outcome: 'ignored', detail: expect.stringContaining('stays paid') });
    expect((await payout(m, p.id)).status).toBe('paid');
  });

  it('a lost answer is reconciled through the transfer_group the key names: one transfer; a reversal seen while in flight fails the payout', async () => {
    const account = stripe.connect();
    const { m, payout: p } = await merchantWithPendingPayout('stripe', 7, { stripe_account_id: account });
    await m.api.post('/api/webhook-endpoints', { url: 'https://example.com/hooks', events: ['payout.failed'] });
    await connectStripe(m);
    stripe.dropAnswers(1);
    await m.api.post('/api/payouts/send', { payout_ids: [p.id] });
    await sendsSettled();
    expect(await payout(m, p.id)).toMatchObject({ status: 'processing', provider_reference: null });
    const transfer = stripe.transferOf(p.id);
    stripe.reverse(transfer.id);
    const creates = stripe.createRequests.length;
    await reconcileNow();
    expect(stripe.createRequests.length).toBe(creates);
    expect(await payout(m, p.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'Stripe: transfer reversed',
      provider_reference: transfer.id,
    });
    expect(await commissionStatuses(m)).toEqual([{ status: 'approved', payout_id: null }]);
    expect((await outboxEvents(m.id, 'payout.failed')).map((e) => e.resource.id)).toEqual([p.id]);
  });

  it('an affiliate without a connected account is refused before anything is sent; a destination Stripe does not know fails the payout', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('stripe', 5);
    await connectStripe(m);
    expectError(
      await m.api.post('/api/payouts/send', { payout_ids: [p.id] }),
      400,
      `Payout ${p.id}: affiliate ${m.affiliate.id} has no stripe_account_id (Stripe Connect onboarding not finished); nothing was sent`,
    );
    expectError(
      await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { stripe_account_id: 'nope' }),
      400,
      /stripe_account_id: Expected a Stripe account id/,
    );
    expect(
      (await m.api.patch(`/api/affiliates/${m.affiliate.id}`, { stripe_account_id: 'acct_unknown1' })).body.data
        .affiliate.stripe_account_id,
    ).toBe('acct_unknown1');
    await m.api.post('/api/payouts/send', { payout_ids: [p.id] });
    await sendsSettled();
    expect(await payout(m, p.id)).toMatchObject({
      status: 'failed',
      failure_reason: "Stripe refused the transfer (400): No such destination: 'acct_unknown1'",
    });
  });
});

describe('Wise transfers', () => {
  it('quote, e-mail recipient, transfer with a customerTransactionId, funded from the balance; a signed state change pays the payout', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('wise', 30, { payout_email: 'jane.wise@example.com' });
    await connectWise(m);
    expect((await m.api.post('/api/payouts/send', { payout_ids: [p.id] })).status).toBe(202);
    await sendsSettled();
    const request = wise.transferRequests.at(-1);
    expect(request.customerTransactionId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const transfer = wise.transferOf(request.customerTransactionId);
    expect(transfer).toMatchObject({ status: 'processing', sourceCurrency: 'USD', targetValue: 30 });
    expect(await payout(m, p.id)).toMatchObject({ status: 'processing', provider_reference: String(transfer.id) });

    wise.setStatus(transfer.id, 'outgoing_payment_sent');
    const hook = wise.webhook(transfer.id, 'processing', 'outgoing_payment_sent');
    const res = await postWebhook(`/webhooks/wise/${m.id}`, hook.body, hook.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.webhook).toMatchObject({
      provider: 'wise',
      event_type: 'transfers#state-change',
      outcome: 'processed',
    });
    expect((await payout(m, p.id)).status).toBe('paid');
  });

  it('refuses a webhook not signed by Wise; a bounce found by the reconciliation fails the payout', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('wise', 12);
    await connectWise(m);
    await m.api.post('/api/payouts/send', { payout_ids: [p.id] });
    await sendsSettled();
    const transfer = wise.transferOf(wise.transferRequests.at(-1).customerTransactionId);
    const forger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = wise.webhook(transfer.id, 'processing', 'outgoing_payment_sent', forger);
    expectError(
      await postWebhook(`/webhooks/wise/${m.id}`, forged.body, forged.headers),
      400,
      'Invalid X-Signature-SHA256: not signed by Wise',
    );
    const { ['x-signature-sha256']: _s, ...unsigned } = forged.headers;
    expectError(
      await postWebhook(`/webhooks/wise/${m.id}`, forged.body, unsigned),
      400,
      'Missing X-Signature-SHA256 header',
    );
    expect((await payout(m, p.id)).status).toBe('processing');

    wise.setStatus(transfer.id, 'bounced_back');
    await reconcileNow();
    expect(await payout(m, p.id)).toMatchObject({ status: 'failed', failure_reason: 'Wise: bounced_back' });
    expect(await commissionStatuses(m)).toEqual([{ status: 'approved', payout_id: null }]);
  });

  it('a lost answer: the same customerTransactionId answers the transfer already made, funded once', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('wise', 14);
    await connectWise(m);
    wise.dropAnswers(1);
    await m.api.post('/api/payouts/send', { payout_ids: [p.id] });
    await sendsSettled();
    expect(await payout(m, p.id)).toMatchObject({ status: 'processing', provider_reference: null });
    const key = wise.transferRequests.at(-1).customerTransactionId;
    await reconcileNow();
    const made = [...wise.transfers.values()].filter((t) => t.customerTransactionId === key);
    expect(made).toHaveLength(1);
    expect(wise.fundRequests.filter((id) => id === made[0].id)).toHaveLength(1);
    expect(await payout(m, p.id)).toMatchObject({ status: 'processing', provider_reference: String(made[0].id) });
  });

  it('a Wise affiliate needs a name; the wise integration names a missing field', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('wise', 3, { name: null });
    expectError(
      await m.api.put('/api/integrations/wise', { api_token: 'x', environment: 'live' }),
      400,
      'profile_id: Required',
    );
    expectError(
      await m.api.put('/api/integrations/wise', { api_token: 'x', environment: 'live', profile_id: 'abc' }),
      400,
      'profile_id: Expected a Wise profile id (digits)',
    );
    await connectWise(m);
    expectError(
      await m.api.post('/api/payouts/send', { payout_ids: [p.id] }),
      400,
      `Payout ${p.id}: affiliate ${m.affiliate.id} has no name, which Wise needs as the account holder's; nothing was sent`,
    );
  });
});
