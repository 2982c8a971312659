import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  call,
  createMerchantOn,
  describeWithPostgres,
  startService,
  stopService,
  waitFor,
  withDatabase,
  type ServiceProcess,
} from './support/service.js';

/** Integration credentials are sealed at rest, as in production (any 32 bytes). */
const ENCRYPTION_KEY = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

/*
 * Issue 40: "a restart or kill -9 mid-send loses and doubles nothing", with a real kill -9 of the
 * service process (not a crash simulated inside one process, as test/api/payout-rails-paypal.test.ts
 * does). The service runs as a child process against its own database and a local PayPal
 * (test/support/rails/paypal-standin.ts) in this process; the stand-in's own record of what it
 * received (batches, items by sender_item_id) says whether anything was lost or doubled.
 */
describeWithPostgres('kill -9 mid-send (PayPal Payouts)', () => {
  let db: TestDatabase;
  let paypal: PayPalStandIn;
  let service: ServiceProcess | undefined;

  // A short reconciliation interval, so the restarted service finishes payouts in flight quickly.
  const env = () => ({ ENCRYPTION_KEY, PAYPAL_API_BASE_URL: paypal.baseUrl, PAYOUT_RECONCILE_INTERVAL_SECONDS: '2' });

  beforeAll(async () => {
    db = await createTestDatabase();
    paypal = await new PayPalStandIn().start();
  });
  afterEach(async () => {
    await stopService(service);
    service = undefined;
  });
  afterAll(async () => {
    await stopService(service);
    await paypal?.stop();
    await db?.stop();
  });

  /** An organization with PayPal connected and one pending payout of `amount` for a partner paid by PayPal. */
  async function pendingPayPalPayout(baseUrl: string, amount: number) {
    const m = await createMerchantOn(baseUrl);
    const email = `${m.slug}.paypal@example.com`;
    const patched = await call(baseUrl, 'PATCH', `/api/affiliates/${m.affiliateId}`, {
      key: m.key,
      body: { payout_method: 'paypal', payout_email: email, name: 'Jane Doe' },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const commission = await call(baseUrl, 'POST', '/api/commissions', {
      key: m.key,
      body: { affiliate_id: m.affiliateId, amount, description: 'earned' },
    });
    expect(commission.status, JSON.stringify(commission.body)).toBe(201);
    const created = await call(baseUrl, 'POST', '/api/payouts', { key: m.key, body: {} });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.payouts).toHaveLength(1);
    const integration = await call(baseUrl, 'PUT', '/api/integrations/paypal_payouts', {
      key: m.key,
      body: {
        client_id: paypal.clientId,
        client_secret: paypal.clientSecret,
        environment: 'sandbox',
        webhook_id: paypal.webhookId,
      },
    });
    expect(integration.status, JSON.stringify(integration.body)).toBe(200);
    return { ...m, email, payoutId: created.body.data.payouts[0].id as string };
  }

  /** POST /api/payouts/send, not awaited: the process is killed while it runs. */
  function sendInBackground(baseUrl: string, key: string, payoutId: string) {
    return call(baseUrl, 'POST', '/api/payouts/send', {
      key,
      body: { payout_ids: [payoutId] },
      timeoutMs: 30_000,
    }).catch((err: unknown) => err as Error);
  }

  async function killNine(target: ServiceProcess) {
    target.child.kill('SIGKILL');
    const exit = await target.exited;
    expect(exit.signal).toBe('SIGKILL');
  }

  const payoutOf = async (baseUrl: string, key: string, id: string) => {
    const res = await call(baseUrl, 'GET', `/api/payouts/${id}`, { key });
    expect(res.status).toBe(200);
    return res.body.data.payout;
  };
  const commissionsOf = async (baseUrl: string, key: string, affiliateId: string) => {
    const res = await call(baseUrl, 'GET', `/api/commissions?affiliate_id=${affiliateId}`, { key });
    expect(res.status).toBe(200);
    return res.body.data.commissions.map((c: { status: string; payout_id: string | null }) => ({
      status: c.status,
      payout_id: c.payout_id,
    }));
  };
  /** What PayPal holds for this payout: the batches with an item for it, and its items across them. */
  const atPayPal = (payoutId: string) => {
    const batches = [...paypal.batches.values()].filter((b) =>
      b.items.some((i) => i.payout_item.sender_item_id === payoutId),
    );
    const items = batches.flatMap((b) => b.items.filter((i) => i.payout_item.sender_item_id === payoutId));
    const requests = paypal.createRequests.filter((r) =>
      r.items.some((i: { sender_item_id: string }) => i.sender_item_id === payoutId),
    );
    return { batches, items, requests };
  };
  const storedKey = async (payoutId: string) => {
    return withDatabase(
      db.url,
      async (client) =>
        (
          await client.query<{ status: string; send_key: string | null }>(
            'select status, send_key from payouts where id = $1',
            [payoutId],
          )
        ).rows[0],
    );
  };

  async function paidAfterRestart(baseUrl: string, key: string, payoutId: string) {
    await waitFor(
      async () => (await payoutOf(baseUrl, key, payoutId)).status === 'paid',
      45_000,
      `payout ${payoutId} paid after the restart`,
    );
    return payoutOf(baseUrl, key, payoutId);
  }

  it(
    'killed while PayPal holds its answer to the batch (PayPal performed it): after a restart the reconciliation finds the same batch; paid once',
    { timeout: 120_000 },
    async () => {
      service = await startService(db.url, env());
      const m = await pendingPayPalPayout(service.url, 42.5);
      const hold = paypal.holdNext('create');
      const answer = sendInBackground(service.url, m.key, m.payoutId);
      await hold.arrived;
      // PayPal has the batch (performed on receipt) and pays it; the service never hears back.
      expect(atPayPal(m.payoutId).batches).toHaveLength(1);
      paypal.setItem(m.payoutId, 'SUCCESS');
      const stored = await storedKey(m.payoutId);
      expect(stored).toMatchObject({ status: 'processing', send_key: expect.stringMatching(/^svc-[0-9a-f]{32}$/) });
      await killNine(service);
      hold.release();
      expect(await answer).toBeInstanceOf(Error);

      service = await startService(db.url, env());
      const paid = await paidAfterRestart(service.url, m.key, m.payoutId);
      const seen = atPayPal(m.payoutId);
      expect(seen.batches).toHaveLength(1);
      expect(seen.items).toHaveLength(1);
      expect(seen.batches[0].sender_batch_header.sender_batch_id).toBe(stored.send_key);
      // Every request for it (the first, the reconciliation's repeat) carried the one stored key.
      expect(new Set(seen.requests.map((r) => r.sender_batch_header.sender_batch_id))).toEqual(
        new Set([stored.send_key]),
      );
      expect(seen.items[0].payout_item.amount).toEqual({ value: '42.50', currency: 'USD' });
      expect(paid).toMatchObject({
        status: 'paid',
        provider_reference: `${seen.batches[0].payout_batch_id}/${seen.items[0].payout_item_id}`,
        paid_at: expect.any(String),
      });
      expect(await commissionsOf(service.url, m.key, m.affiliateId)).toEqual([
        { status: 'paid', payout_id: m.payoutId },
      ]);
      console.info(
        `[payout-kill/held-answer] create requests ${seen.requests.length}, batches ${seen.batches.length}, items ${seen.items.length}, payout ${paid.status}`,
      );
    },
  );

  it(
    'killed after the payout was committed processing but before the batch reached PayPal: after a restart it goes out once under its stored key; paid once',
    { timeout: 120_000 },
    async () => {
      service = await startService(db.url, env());
      const m = await pendingPayPalPayout(service.url, 13);
      // The OAuth token call is held: the service has committed the payout, and waits before its batch.
      const hold = paypal.holdNext('token');
      const answer = sendInBackground(service.url, m.key, m.payoutId);
      await hold.arrived;
      const stored = await storedKey(m.payoutId);
      expect(stored).toMatchObject({ status: 'processing', send_key: expect.stringMatching(/^svc-[0-9a-f]{32}$/) });
      await killNine(service);
      hold.release();
      expect(await answer).toBeInstanceOf(Error);
      expect(atPayPal(m.payoutId).requests).toHaveLength(0);

      service = await startService(db.url, env());
      await waitFor(() => atPayPal(m.payoutId).batches.length > 0, 45_000, 'the batch sent by the reconciliation');
      paypal.setItem(m.payoutId, 'SUCCESS');
      const paid = await paidAfterRestart(service.url, m.key, m.payoutId);
      const seen = atPayPal(m.payoutId);
      expect(seen.batches).toHaveLength(1);
      expect(seen.items).toHaveLength(1);
      expect(seen.batches[0].sender_batch_header.sender_batch_id).toBe(stored.send_key);
      expect(new Set(seen.requests.map((r) => r.sender_batch_header.sender_batch_id))).toEqual(
        new Set([stored.send_key]),
      );
      expect(paid).toMatchObject({
        status: 'paid',
        provider_reference: `${seen.batches[0].payout_batch_id}/${seen.items[0].payout_item_id}`,
      });
      expect(await commissionsOf(service.url, m.key, m.affiliateId)).toEqual([
        { status: 'paid', payout_id: m.payoutId },
      ]);
      console.info(
        `[payout-kill/before-paypal] create requests ${seen.requests.length}, batches ${seen.batches.length}, items ${seen.items.length}, payout ${paid.status}`,
      );
    },
  );

  it(
    'killed after PayPal answered but before its webhook: after a restart the SUCCEEDED webhook pays it; nothing sent again',
    { timeout: 120_000 },
    async () => {
      service = await startService(db.url, env());
      const m = await pendingPayPalPayout(service.url, 7.25);
      const answered = await call(service.url, 'POST', '/api/payouts/send', {
        key: m.key,
        body: { payout_ids: [m.payoutId] },
      });
      expect(answered.status, JSON.stringify(answered.body)).toBe(202);
      const batchId = atPayPal(m.payoutId).batches[0].payout_batch_id;
      expect(answered.body.data.payouts[0]).toMatchObject({
        id: m.payoutId,
        status: 'processing',
        provider_reference: batchId,
      });
      await killNine(service);

      service = await startService(db.url, env());
      paypal.setItem(m.payoutId, 'SUCCESS');
      const hook = paypal.webhookFor(m.payoutId, 'SUCCEEDED');
      const delivered = await fetch(`${service.url}/webhooks/paypal/${m.organizationId}`, {
        method: 'POST',
        headers: hook.headers,
        body: hook.body,
      });
      const body = await delivered.json();
      expect(delivered.status, JSON.stringify(body)).toBe(200);
      // The reconciliation may have recorded SUCCESS first: either way it is paid once.
      expect(['processed', 'ignored']).toContain(body.data.webhook.outcome);
      const paid = await payoutOf(service.url, m.key, m.payoutId);
      const seen = atPayPal(m.payoutId);
      expect(paid).toMatchObject({ status: 'paid', provider_reference: `${batchId}/${seen.items[0].payout_item_id}` });
      // Let a reconciliation pass run on the restarted service: it sends nothing more.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect(atPayPal(m.payoutId).requests).toHaveLength(1);
      expect(seen.batches).toHaveLength(1);
      expect(seen.items).toHaveLength(1);
      expect(await commissionsOf(service.url, m.key, m.affiliateId)).toEqual([
        { status: 'paid', payout_id: m.payoutId },
      ]);
      console.info(
        `[payout-kill/before-webhook] create requests ${atPayPal(m.payoutId).requests.length}, batches ${seen.batches.length}, webhook ${body.data.webhook.outcome}, payout ${paid.status}`,
      );
    },
  );
});
