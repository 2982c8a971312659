import Stripe from 'stripe';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startFreezableProxy, type FreezableProxy } from '../support/freezable-proxy.js';
import {
  call,
  createMerchantOn,
  describeWithPostgres,
  startService,
  stopService,
  type JsonResponse,
  type ServiceProcess,
} from './support/service.js';

/**
 * Short bounds, so the test runs in seconds; the defaults (config.ts) are a few seconds each. The
 * client-side statement bound (DB_QUERY_TIMEOUT_MS) is the longest, so a request on a frozen
 * database should answer 503 within about one of it; 3x leaves room for a loaded CI machine and
 * for a request that first waits for a connection, without letting a hang (unbounded: as long as the
 * freeze lasts) pass.
 */
const TIMEOUTS = {
  DB_STATEMENT_TIMEOUT_MS: 1_000,
  DB_QUERY_TIMEOUT_MS: 1_500,
  DB_ACQUIRE_TIMEOUT_MS: 1_500,
  DB_CONNECT_TIMEOUT_MS: 1_000,
};
const BOUND_MS = 3 * TIMEOUTS.DB_QUERY_TIMEOUT_MS;
/** The test's own patience: past the bound, a request that has not answered counts as hanging. */
const GIVE_UP_MS = BOUND_MS + 5_000;
const POOL_MAX = 5;
const STRIPE_SECRET = 'whsec_frozen_5f1c0e1e0f6d4c1a9b2e7d3c8a4b6e2f';
const UNAVAILABLE = { success: false, message: 'Service temporarily unavailable; safe to retry' };

type Merchant = Awaited<ReturnType<typeof createMerchantOn>>;
type Timed = (JsonResponse & { ms: number }) | { status: 'no answer'; error: string; ms: number };

/**
 * PostgreSQL stops answering without closing anything (SIGSTOP, a paused VM, a stalled disk, a
 * partition that drops packets): the service reaches it through a proxy the test freezes. The
 * machine's PostgreSQL is shared with other test runs, so it is never frozen itself.
 */
describeWithPostgres('PostgreSQL frozen: every database wait is bounded', () => {
  let db: TestDatabase;
  let proxy: FreezableProxy;
  let service: ServiceProcess | undefined;
  let merchant: Merchant;
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    const target = new URL(db.url);
    proxy = await startFreezableProxy(target.hostname, Number(target.port || 5432));
    service = await startService(proxy.urlFor(db.url), {
      ...Object.fromEntries(Object.entries(TIMEOUTS).map(([name, ms]) => [name, String(ms)])),
      DB_POOL_MAX: String(POOL_MAX),
      // The key stays cached through the freeze, so each request reaches its route's own statements.
      API_KEY_CACHE_TTL_MS: '60000',
    });
    merchant = await createMerchantOn(service.url);
    const put = await call(service.url, 'PUT', '/api/integrations/stripe', {
      key: merchant.key,
      body: { signing_secret: STRIPE_SECRET },
    });
    expect(put.status).toBe(200);
  });
  afterAll(async () => {
    await stopService(service);
    await proxy?.close();
    await db?.stop();
  });

  /** One request of each kind: the hot lane's writes, an Express read, a provider webhook. */
  const routes: Record<string, () => Promise<Timed>> = {
    'POST /api/clicks': () =>
      timed(() =>
        call(service!.url, 'POST', '/api/clicks', {
          key: merchant.key,
          body: { ref: merchant.slug },
          timeoutMs: GIVE_UP_MS,
        }),
      ),
    'POST /api/conversions': () =>
      timed(() =>
        call(service!.url, 'POST', '/api/conversions', {
          key: merchant.key,
          body: {
            external_id: `frozen-${Date.now()}-${++seq}`,
            amount: 10,
            ref: merchant.slug,
            customer_id: `frozen-cus-${seq}`,
          },
          timeoutMs: GIVE_UP_MS,
        }),
      ),
    'GET /api/conversions': () =>
      timed(() => call(service!.url, 'GET', '/api/conversions?limit=5', { key: merchant.key, timeoutMs: GIVE_UP_MS })),
    'POST /webhooks/stripe/:organization': () => timed(() => stripeInvoicePaid(service!.url, merchant, ++seq)),
  };

  const statuses = (answers: Record<string, Timed>) =>
    Object.fromEntries(Object.entries(answers).map(([name, a]) => [name, a.status]));
  /** Each route's success status (a click, conversion and webhook write 201 or 200, the list 200). */
  const allSucceeded = () =>
    Object.fromEntries(
      Object.keys(routes).map((name) => [name, expect.toSatisfy((s: unknown) => s === 200 || s === 201)]),
    );
  const all = async () =>
    Object.fromEntries(
      await Promise.all(Object.entries(routes).map(async ([name, send]) => [name, await send()] as const)),
    );

  it(
    'answers 503 with Retry-After within the bound on every route while frozen, and serves again once thawed',
    { timeout: 120_000 },
    async () => {
      // Warm: connections in the pool, caches filled, every route working.
      expect(statuses(await all())).toEqual(allSucceeded());

      proxy.freeze();
      try {
        // First on pooled connections (their statements go unanswered), then again, when the pool must
        // open new connections (the start-up goes unanswered) or wait for one.
        for (const wave of ['pooled connections', 'new connections']) {
          const [answers, ready, health] = await Promise.all([
            all(),
            timed(() => call(service!.url, 'GET', '/ready', { timeoutMs: GIVE_UP_MS })),
            timed(() => call(service!.url, 'GET', '/health', { timeoutMs: GIVE_UP_MS })),
          ]);
          console.info(
            `[frozen, ${wave}] ${Object.entries({ ...answers, 'GET /ready': ready })
              .map(([name, a]) => `${name} ${a.status} in ${Math.round(a.ms)} ms`)
              .join('; ')}`,
          );
          for (const [name, answer] of Object.entries(answers)) {
            expect({ name, status: answer.status, body: 'body' in answer ? answer.body : answer.error }).toEqual({
              name,
              status: 503,
              body: UNAVAILABLE,
            });
            expect((answer as JsonResponse).headers.get('retry-after'), name).toBe('1');
            expect(answer.ms, `${name} (${wave})`).toBeLessThan(BOUND_MS);
          }
          expect(ready.status).toBe(503);
          expect((ready as JsonResponse).body).toEqual({ success: false, message: 'Database unavailable' });
          expect(ready.ms).toBeLessThan(BOUND_MS);
          // Liveness does not depend on the database: a frozen database is no reason to restart us.
          expect(health.status).toBe(200);
        }
      } finally {
        proxy.thaw();
      }

      // Thawed: the very next request of each kind succeeds (no connection left broken in the pool).
      expect(statuses(await all())).toEqual(allSucceeded());
      expect((await call(service!.url, 'GET', '/ready')).status).toBe(200);
      expect(service!.child.exitCode).toBeNull();
    },
  );

  it(
    'discards a connection whose statement went unanswered instead of lending it to the next request',
    { timeout: 120_000 },
    async () => {
      // Every connection open now is lost for good (no answer, no reset), as after a failover; new
      // ones work. Each lost connection may fail the one request that meets it, and must then leave
      // the pool: were it lent again, every request meeting it would wait and fail in its turn.
      expect(statuses(await all())).toEqual(allSucceeded());
      proxy.blackholeExisting();
      const names = Object.keys(routes);
      const outcomes: { name: string; status: number | string; ms: number }[] = [];
      let consecutiveSuccesses = 0;
      for (let i = 0; consecutiveSuccesses < 12 && i < 40; i++) {
        const name = names[i % names.length];
        const answer = await routes[name]();
        outcomes.push({ name, status: answer.status, ms: Math.round(answer.ms) });
        if (typeof answer.status === 'number' && answer.status < 300) consecutiveSuccesses++;
        else {
          consecutiveSuccesses = 0;
          expect({ name, status: answer.status, body: 'body' in answer ? answer.body : answer.error }).toEqual({
            name,
            status: 503,
            body: UNAVAILABLE,
          });
          expect(answer.ms, name).toBeLessThan(BOUND_MS);
        }
      }
      const failures = outcomes.filter((o) => o.status !== 200 && o.status !== 201);
      console.info(`[lost connections] ${outcomes.length} requests, failures: ${JSON.stringify(failures)}`);
      expect(consecutiveSuccesses).toBe(12);
      // At most one failure per connection the pool held (it holds at most DB_POOL_MAX).
      expect(failures.length).toBeLessThanOrEqual(POOL_MAX);
    },
  );
});

async function timed(send: () => Promise<JsonResponse>): Promise<Timed> {
  const started = performance.now();
  try {
    const answer = await send();
    return { ...answer, ms: performance.now() - started };
  } catch (err) {
    return { status: 'no answer', error: String(err), ms: performance.now() - started };
  }
}

/** A signed Stripe `invoice.paid` for a new subscription referred by the merchant's affiliate (a conversion). */
async function stripeInvoicePaid(baseUrl: string, merchant: Merchant, n: number): Promise<JsonResponse> {
  const now = Math.floor(Date.now() / 1000);
  const id = `${Date.now().toString(36)}${n}`;
  const payload = JSON.stringify({
    id: `evt_${id}`,
    object: 'event',
    api_version: '2025-03-31.basil',
    created: now,
    livemode: true,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'invoice.paid',
    data: {
      object: {
        id: `in_${id}`,
        object: 'invoice',
        billing_reason: 'subscription_create',
        amount_due: 2500,
        amount_paid: 2500,
        amount_remaining: 0,
        currency: 'usd',
        customer: `cus_${id}`,
        customer_email: 'buyer@example.com',
        status: 'paid',
        total: 2500,
        total_taxes: [],
        metadata: {},
        parent: {
          type: 'subscription_details',
          quote_details: null,
          subscription_details: { metadata: { ref_svc_affiliate: merchant.slug }, subscription: `sub_${id}` },
        },
        status_transitions: { finalized_at: now - 10, paid_at: now - 5 },
        created: now - 10,
      },
    },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET });
  const res = await fetch(`${baseUrl}/webhooks/stripe/${merchant.organizationId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    body: payload,
    signal: AbortSignal.timeout(GIVE_UP_MS),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the assertion shows the text
  }
  return { status: res.status, body, headers: res.headers };
}
