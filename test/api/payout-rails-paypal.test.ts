import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { PayoutReconciliation } from '../../server/src/jobs/payout-reconciliation.js';
import { expectError } from '../support/api.js';
import { testServer } from '../support/server.js';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';
import {
  commissionStatuses,
  merchantWithPendingPayout,
  outboxEvents,
  payout,
  pendingPayout,
  postWebhook,
  reconcileNow,
  sendsSettled,
  type Merchant,
} from './payout-rails.support.js';

/*
 * PayPal Payouts end to end, against a local PayPal that speaks Payouts v1 as documented
 * (test/support/rails/paypal-standin.ts; https://developer.paypal.com/docs/api/payments.payouts-batch/v1/).
 */
let paypal: PayPalStandIn;
const previousBase = process.env.PAYPAL_API_BASE_URL;

beforeAll(async () => {
  paypal = await new PayPalStandIn().start();
  process.env.PAYPAL_API_BASE_URL = paypal.baseUrl;
});
afterAll(async () => {
  if (previousBase === undefined) delete process.env.PAYPAL_API_BASE_URL;
  else process.env.PAYPAL_API_BASE_URL = previousBase;
  await paypal.stop();
});

async function connectPayPal(m: Merchant, over: Record<string, unknown> = {}) {
  const res = await m.api.put('/api/integrations/paypal_payouts', {
    client_id: paypal.clientId,
    client_secret: paypal.clientSecret,
    environment: 'sandbox',
    webhook_id: paypal.webhookId,
    ...over,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data.integration).toEqual({
    provider: 'paypal_payouts',
    kind: 'payout_rail',
    configured: true,
    environment: 'sandbox',
    webhook_path: `/webhooks/paypal/${m.id}`,
    updated_at: expect.any(String),
    livemode: true,
  });
  expect(JSON.stringify(res.body)).not.toContain(paypal.clientSecret);
}

async function sent(m: Merchant, ids: string[]) {
  const res = await m.api.post('/api/payouts/send', { payout_ids: ids });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.data.payouts;
}

describe('PayPal Payouts: send, webhooks, reconciliation', () => {
  it('sends one batch per currency with keys derived from the payouts; a SUCCEEDED webhook pays the payout and its commissions', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 42.5, {
      payout_email: 'jane.paypal@example.com',
    });
    await connectPayPal(m);
    // The partner's PayPal e-mail names the program it pays for.
    expect((await m.api.patch(`/api/programs/${m.program.id}`, { name: 'Café Crème Partners' })).status).toBe(200);
    const [answered] = await sent(m, [p.id]);
    expect(answered).toMatchObject({
      id: p.id,
      status: 'processing',
      method: 'paypal',
      failure_reason: null,
      simulated: false,
      sent_at: expect.any(String),
    });
    await sendsSettled();

    const request = paypal.createRequests.find((r) => r.items.some((i: any) => i.sender_item_id === p.id));
    expect(request.sender_batch_header).toMatchObject({
      sender_batch_id: expect.stringMatching(/^svc-[0-9a-f]{32}$/),
      recipient_type: 'EMAIL',
      email_subject: 'You have a payout from Café Crème Partners',
    });
    expect(request.items).toEqual([
      {
        recipient_type: 'EMAIL',
        amount: { value: '42.50', currency: 'USD' },
        receiver: 'jane.paypal@example.com',
        sender_item_id: p.id,
        note: `Referral commissions from Café Crème Partners (payout ${p.id})`,
      },
    ]);
    const batchId = [...paypal.batches.values()].find(
      (b) => b.sender_batch_header.sender_batch_id === request.sender_batch_header.sender_batch_id,
    )!.payout_batch_id;
    // The answer waited for PayPal's (bounded): it already names the batch.
    expect(answered.provider_reference).toBe(batchId);
    expect((await payout(m, p.id)).provider_reference).toBe(batchId);

    // Sending again: refused, nothing more reaches PayPal.
    const before = paypal.createRequests.length;
    expectError(
      await m.api.post('/api/payouts/send', { payout_ids: [p.id] }),
      409,
      `Payout ${p.id} is processing: only a pending payout can be sent`,
    );
    expect(paypal.createRequests.length).toBe(before);

    paypal.setItem(p.id, 'SUCCESS');
    const hook = paypal.webhookFor(p.id, 'SUCCEEDED');
    const res = await postWebhook(`/webhooks/paypal/${m.id}`, hook.body, hook.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.webhook).toMatchObject({
      provider: 'paypal_payouts',
      event_type: 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED',
      outcome: 'processed',
    });
    const item = paypal.item(p.id)!;
    expect(await payout(m, p.id)).toMatchObject({
      status: 'paid',
      provider_reference: `${batchId}/${item.payout_item_id}`,
      paid_at: expect.any(String),
    });
    expect(await commissionStatuses(m)).toEqual([{ status: 'paid', payout_id: p.id }]);

    // Redelivered: nothing changes.
    const again = await postWebhook(`/webhooks/paypal/${m.id}`, hook.body, hook.headers);
    expect(again.status).toBe(200);
    expect(again.body.data.webhook).toMatchObject({
      outcome: 'duplicate',
      detail: 'Event already handled; nothing changed',
    });
  });

  it('a RETURNED item fails the payout: reason recorded, commissions approved again, payout.failed emitted, the partner sees it; retry sends a new payout', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 10);
    await m.api.post('/api/webhook-endpoints', { url: 'https://example.com/hooks', events: ['payout.failed'] });
    await connectPayPal(m);
    await sent(m, [p.id]);
    await sendsSettled();
    paypal.setItem(p.id, 'RETURNED', { name: 'RECEIVER_UNREGISTERED', message: 'Receiver is unregistered' });
    const hook = paypal.webhookFor(p.id, 'RETURNED');
    expect((await postWebhook(`/webhooks/paypal/${m.id}`, hook.body, hook.headers)).status).toBe(200);

    const failed = await payout(m, p.id);
    expect(failed).toMatchObject({
      status: 'failed',
      failure_reason: 'PayPal: RETURNED (RECEIVER_UNREGISTERED: Receiver is unregistered)',
      failed_at: expect.any(String),
      paid_at: null,
    });
    expect(await commissionStatuses(m)).toEqual([{ status: 'approved', payout_id: null }]);
    const events = await outboxEvents(m.id, 'payout.failed');
    expect(events.map((e) => [e.resource.id, e.resource.status, e.resource.failure_reason])).toEqual([
      [p.id, 'failed', failed.failure_reason],
    ]);

    // Retry: a new payout carries the commissions again and goes out at once; the failed one stays as the record.
    const retried = await m.api.post(`/api/payouts/${p.id}/retry`, {});
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    expect(retried.body.data.payout).toMatchObject({ status: 'processing', method: 'paypal', amount: 10 });
    expect(retried.body.data.payout.id).not.toBe(p.id);
    expect(failed.retried_by_payout_id).toBeNull();
    expect(retried.body.data.payout.retried_by_payout_id).toBeNull();
    // The failed payout names the one that carried its commissions; retried again: 409 naming it, nothing created.
    expect(await payout(m, p.id)).toMatchObject({
      status: 'failed',
      retried_by_payout_id: retried.body.data.payout.id,
    });
    expectError(
      await m.api.post(`/api/payouts/${p.id}/retry`, {}),
      409,
      `Payout ${p.id} was retried already: its commissions went into payout ${retried.body.data.payout.id}`,
    );
    expect((await m.api.get(`/api/payouts?affiliate_id=${m.affiliate.id}`)).body.data.payouts).toHaveLength(2);
    expectError(
      await m.api.post(`/api/payouts/${retried.body.data.payout.id}/retry`, {}),
      409,
      'A processing payout cannot be retried: only a failed one',
    );
    await sendsSettled();
    expect(paypal.item(retried.body.data.payout.id)).toBeDefined();
  });

  it('UNCLAIMED stays processing; the reconciliation records SUCCESS without any webhook', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 15);
    await connectPayPal(m);
    await sent(m, [p.id]);
    await sendsSettled();
    paypal.setItem(p.id, 'UNCLAIMED');
    const hook = paypal.webhookFor(p.id, 'UNCLAIMED', { bare: true });
    const res = await postWebhook(`/webhooks/paypal/${m.id}`, hook.body, hook.headers);
    expect(res.body.data.webhook.outcome).toBe('ignored');
    expect((await payout(m, p.id)).status).toBe('processing');
    await reconcileNow();
    expect((await payout(m, p.id)).status).toBe('processing');

    paypal.setItem(p.id, 'SUCCESS');
    await reconcileNow();
    expect(await payout(m, p.id)).toMatchObject({ status: 'paid', provider_reference: expect.stringContaining('/') });
  });

  it('an item event without the original payout_item is read back from PayPal by its payout_item_id', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 16);
    await connectPayPal(m);
    await sent(m, [p.id]);
    await sendsSettled();
    paypal.setItem(p.id, 'BLOCKED', { name: 'RECEIVER_ACCOUNT_LOCKED', message: 'Receiver account is locked' });
    const hook = paypal.webhookFor(p.id, 'BLOCKED', { bare: true });
    const res = await postWebhook(`/webhooks/paypal/${m.id}`, hook.body, hook.headers);
    expect(res.body.data.webhook.outcome).toBe('processed');
    expect(await payout(m, p.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'PayPal: BLOCKED (RECEIVER_ACCOUNT_LOCKED: Receiver account is locked)',
    });
  });

  it('a lost answer (PayPal paid, the connection dropped) is reconciled by asking PayPal for the same sender_batch_id: one batch, paid once', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 20);
    await connectPayPal(m);
    paypal.dropAnswers(1);
    await sent(m, [p.id]);
    await sendsSettled();
    const afterLoss = await payout(m, p.id);
    expect(afterLoss).toMatchObject({ status: 'processing', provider_reference: null });
    const batchesOf = () =>
      [...paypal.batches.values()].filter((b) => b.items.some((i) => i.payout_item.sender_item_id === p.id));
    expect(batchesOf()).toHaveLength(1);

    await reconcileNow();
    expect(batchesOf()).toHaveLength(1);
    expect((await payout(m, p.id)).provider_reference).toBe(batchesOf()[0].payout_batch_id);
    paypal.setItem(p.id, 'SUCCESS');
    await reconcileNow();
    expect((await payout(m, p.id)).status).toBe('paid');
    expect(batchesOf()).toHaveLength(1);
  });

  it('a send that never reached PayPal (as after a crash between the commit and the call) goes out once, by the reconciliation, under the stored key', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 13);
    await connectPayPal(m);
    // PayPal unreachable: nothing arrives there; the payout is recorded in flight under its key.
    process.env.PAYPAL_API_BASE_URL = 'http://127.0.0.1:9';
    try {
      const res = await m.api.post('/api/payouts/send', { payout_ids: [p.id] });
      expect(res.status).toBe(202);
      expect(res.body.data.payouts[0]).toMatchObject({ status: 'processing', provider_reference: null });
      await sendsSettled();
    } finally {
      process.env.PAYPAL_API_BASE_URL = paypal.baseUrl;
    }
    expect(paypal.createRequests.filter((r) => r.items.some((i: any) => i.sender_item_id === p.id))).toHaveLength(0);
    await reconcileNow();
    await reconcileNow();
    const requests = paypal.createRequests.filter((r) => r.items.some((i: any) => i.sender_item_id === p.id));
    expect(requests).toHaveLength(1);
    const batch = [...paypal.batches.values()].find((b) => b.items.some((i) => i.payout_item.sender_item_id === p.id))!;
    // The second pass read the batch back: its item is known too.
    expect((await payout(m, p.id)).provider_reference).toBe(
      `${batch.payout_batch_id}/${batch.items[0].payout_item_id}`,
    );
  });

  it('a PAYMENT.PAYOUTSBATCH.DENIED event: the batch is read back from PayPal, its payouts fail', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 17);
    await connectPayPal(m);
    await sent(m, [p.id]);
    await sendsSettled();
    const batch = paypal.denyBatch(p.id);
    const hook = paypal.batchWebhookFor(batch.payout_batch_id, 'DENIED');
    const res = await postWebhook(`/webhooks/paypal/${m.id}`, hook.body, hook.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.webhook).toMatchObject({ event_type: 'PAYMENT.PAYOUTSBATCH.DENIED', outcome: 'processed' });
    expect(await payout(m, p.id)).toMatchObject({ status: 'failed', failure_reason: 'PayPal: batch DENIED' });
    expect(await commissionStatuses(m)).toEqual([{ status: 'approved', payout_id: null }]);
  });

  it('two sends of the same payout at once: one is taken (202), the other refused (409); PayPal receives it once', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 6);
    await connectPayPal(m);
    const answers = await Promise.all([
      m.api.post('/api/payouts/send', { payout_ids: [p.id] }),
      m.api.post('/api/payouts/send', { payout_ids: [p.id] }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
    await sendsSettled();
    expect(paypal.createRequests.filter((r) => r.items.some((i: any) => i.sender_item_id === p.id))).toHaveLength(1);
    expectError(
      await m.api.post(`/api/payouts/${p.id}/paid`, {}),
      409,
      'A processing payout cannot be marked paid: it was sent through its payout rail, whose outcome decides',
    );
    expectError(
      await m.api.post(`/api/payouts/${p.id}/cancel`, {}),
      409,
      'A processing payout cannot be canceled: it was sent through its payout rail, whose outcome decides',
    );
  });

  it('refuses a forged or unverifiable webhook (400) and changes nothing', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 5);
    await connectPayPal(m);
    await sent(m, [p.id]);
    await sendsSettled();
    paypal.setItem(p.id, 'PENDING');
    const genuine = paypal.webhookFor(p.id, 'SUCCEEDED');
    // The event altered after signing (as if SUCCESS), and one with a made-up signature.
    const altered = JSON.parse(genuine.body);
    altered.resource.transaction_status = 'SUCCESS';
    expectError(
      await postWebhook(`/webhooks/paypal/${m.id}`, JSON.stringify(altered), genuine.headers),
      400,
      'Invalid PayPal webhook signature: PayPal did not verify it (verify-webhook-signature)',
    );
    expectError(
      await postWebhook(`/webhooks/paypal/${m.id}`, JSON.stringify(altered), {
        ...genuine.headers,
        'paypal-transmission-sig': 'Zm9yZ2Vk',
      }),
      400,
      /Invalid PayPal webhook signature/,
    );
    const { ['paypal-transmission-sig']: _sig, ...unsigned } = genuine.headers;
    expectError(
      await postWebhook(`/webhooks/paypal/${m.id}`, genuine.body, unsigned),
      400,
      'Missing PayPal webhook header(s): PAYPAL-TRANSMISSION-SIG',
    );
    expect((await payout(m, p.id)).status).toBe('processing');
  });

  it('clear refusals: manual affiliate, no integration, unknown payout; nothing is sent', async () => {
    const manual = await merchantWithPendingPayout('manual', 8);
    expectError(
      await manual.m.api.post('/api/payouts/send', { payout_ids: [manual.payout.id] }),
      400,
      /is paid manually \(payout_method manual\): pay it with the export files \(GET \/api\/payouts\/export/,
    );
    // The bulk form leaves manual payouts to the export files.
    const bulk = await manual.m.api.post('/api/payouts/send', {});
    expect(bulk.status).toBe(202);
    expect(bulk.body.data.payouts).toEqual([]);
    expect((await payout(manual.m, manual.payout.id)).status).toBe('pending');

    const { m, payout: p } = await merchantWithPendingPayout('paypal', 8);
    const before = paypal.createRequests.length;
    expectError(
      await m.api.post('/api/payouts/send', { payout_ids: [p.id] }),
      400,
      'No paypal_payouts integration: add it with PUT /api/integrations/paypal_payouts { client_id, client_secret, environment, webhook_id }; nothing was sent',
    );
    expectError(
      await m.api.post('/api/payouts/send', { payout_ids: ['00000000-0000-4000-8000-000000000000'] }),
      404,
      'Payout 00000000-0000-4000-8000-000000000000 not found',
    );
    expectError(
      await m.api.put('/api/integrations/paypal_payouts', { client_id: 'x' }),
      400,
      /client_secret: Required/,
    );
    expect((await payout(m, p.id)).status).toBe('pending');
    expect(paypal.createRequests.length).toBe(before);

    // Bulk: every pending payout of an affiliate with a rail, as one batch.
    await connectPayPal(m);
    const second = await pendingPayout(m, 3);
    const all = await m.api.post('/api/payouts/send', { currency: 'USD' });
    expect(all.status).toBe(202);
    expect(all.body.data.payouts.map((x: any) => x.id).sort()).toEqual([p.id, second.id].sort());
    await sendsSettled();
    const batch = paypal.createRequests.find((r) => r.items.some((i: any) => i.sender_item_id === p.id));
    expect(batch.items.map((i: any) => i.sender_item_id).sort()).toEqual([p.id, second.id].sort());
  });

  it('the periodic job (pg-boss, PAYOUT_RECONCILE_INTERVAL_SECONDS) records the outcome within the interval, without a webhook', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 11);
    await connectPayPal(m);
    await sent(m, [p.id]);
    await sendsSettled();
    process.env.PAYOUT_RECONCILE_INTERVAL_SECONDS = '1';
    const { db, services } = await testServer();
    const job = new PayoutReconciliation(db.orm, services.payoutSender, pino({ level: 'silent' }));
    try {
      await job.start();
      paypal.setItem(p.id, 'SUCCESS');
      const deadline = Date.now() + 15_000;
      while ((await payout(m, p.id)).status !== 'paid' && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 250));
      expect((await payout(m, p.id)).status).toBe('paid');
    } finally {
      delete process.env.PAYOUT_RECONCILE_INTERVAL_SECONDS;
      await job.stop();
    }
  });

  it('credentials no longer good: PayPal refuses the token, the payout fails with the reason and its commissions are approved again', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 9);
    // Wrong credentials cannot be saved (test/api/paypal-credentials-check.test.ts): these were
    // good when saved, and the merchant has rotated the secret in the PayPal app since.
    await connectPayPal(m);
    paypal.rotateSecret();
    await sent(m, [p.id]);
    await sendsSettled();
    expect(await payout(m, p.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'PayPal refused the paypal_payouts credentials (401): Client Authentication failed',
    });
    expect(await commissionStatuses(m)).toEqual([{ status: 'approved', payout_id: null }]);
  });
});
