import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/src/app.js';
import { createRateLimiterFactory, type RateLimiterFactory } from '../../server/src/http/rate-limit-stores.js';
import { createMerchant, expectError, type ApiResponse } from '../support/api.js';
import { assertDocumentedResponse } from '../support/openapi-validation.js';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';
import { TEST_ADMIN_TOKEN, TEST_ENCRYPTION_KEY, testServer } from '../support/server.js';
import {
  merchantWithPendingPayout,
  payout,
  pendingPayout,
  postWebhook,
  sendsSettled,
  settingsForFile,
  type Merchant,
} from './payout-rails.support.js';

/*
 * Forged PayPal webhooks cost the merchant nothing they can measure: what cannot be PayPal's is
 * refused before PayPal is called, an organization's token is reused until it expires (shared with
 * sending), and the verification calls PayPal is asked are bounded per organization across
 * instances. Every PayPal call is counted at the local PayPal (test/support/rails/paypal-standin.ts).
 */
let paypal: PayPalStandIn;
settingsForFile(
  async () => {
    paypal = await new PayPalStandIn().start();
    return { PAYPAL_API_BASE_URL: paypal.baseUrl };
  },
  () => paypal.stop(),
);

const TOKEN = 'POST /v1/oauth2/token';
const VERIFY = 'POST /v1/notifications/verify-webhook-signature';
const NOT_VERIFIED = 'Invalid PayPal webhook signature: PayPal did not verify it (verify-webhook-signature)';
const CERT_REFUSED =
  "Invalid PAYPAL-CERT-URL: not a certificate of PayPal's sandbox environment (https://api.sandbox.paypal.com/v1/notifications/certs/ or https://api-m.sandbox.paypal.com/v1/notifications/certs/…)";
const STALE = 'PAYPAL-TRANSMISSION-TIME is more than 300 s away from now: not a current PayPal transmission';

const connect = (m: Merchant, over: Record<string, unknown> = {}) =>
  m.api.put('/api/integrations/paypal_payouts', {
    client_id: paypal.clientId,
    client_secret: paypal.clientSecret,
    environment: 'sandbox',
    webhook_id: paypal.webhookId,
    ...over,
  });

/** A request shaped like PayPal's in everything that can be checked without PayPal: only PayPal can tell that its signature is not one of PayPal's. */
function lookalike(headers: Record<string, string> = {}, body?: string) {
  const event = {
    id: `WH-${randomBytes(8).toString('hex').toUpperCase()}`,
    event_version: '1.0',
    create_time: new Date().toISOString(),
    resource_type: 'payouts_item',
    event_type: 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED',
    resource: {},
  };
  return {
    body: body ?? JSON.stringify(event),
    headers: {
      'content-type': 'application/json',
      'paypal-transmission-id': randomUUID(),
      'paypal-transmission-time': new Date().toISOString(),
      'paypal-transmission-sig': randomBytes(256).toString('base64'),
      'paypal-cert-url': 'https://api.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77',
      'paypal-auth-algo': 'SHA256withRSA',
      ...headers,
    },
  };
}

const minutesFromNow = (n: number) => new Date(Date.now() + n * 60_000).toISOString();

async function rejectionsOf(m: Merchant) {
  const res = await m.api.get('/api/integrations/events?outcome=rejected&provider=paypal_payouts');
  expect(res.status).toBe(200);
  return Object.fromEntries(
    res.body.data.webhook_events.map((e: { detail: string; requests: number }) => [e.detail, e.requests]),
  );
}

describe('PayPal webhooks: checked before PayPal is called', () => {
  it("refuses (400) what cannot be PayPal's with no call to PayPal: the certificate's host, the transmission time, the headers' shapes, the body; each counted under its reason", async () => {
    const m = await createMerchant();
    expect((await connect(m)).status).toBe(200);
    const calls = paypal.calls.length;
    const cases: [{ headers: Record<string, string>; body: string }, string][] = [
      [lookalike({ 'paypal-cert-url': 'https://attacker.example/v1/notifications/certs/CERT-1' }), CERT_REFUSED],
      [
        lookalike({
          'paypal-cert-url': 'https://api.sandbox.paypal.com.attacker.example/v1/notifications/certs/CERT-1',
        }),
        CERT_REFUSED,
      ],
      [lookalike({ 'paypal-cert-url': 'http://api.sandbox.paypal.com/v1/notifications/certs/CERT-1' }), CERT_REFUSED],
      [
        lookalike({ 'paypal-cert-url': 'https://api.sandbox.paypal.com:8443/v1/notifications/certs/CERT-1' }),
        CERT_REFUSED,
      ],
      [
        lookalike({ 'paypal-cert-url': 'https://user@api.sandbox.paypal.com/v1/notifications/certs/CERT-1' }),
        CERT_REFUSED,
      ],
      [lookalike({ 'paypal-cert-url': 'https://api.sandbox.paypal.com/v1/oauth2/token' }), CERT_REFUSED],
      // A live certificate cannot verify a sandbox integration's webhooks.
      [lookalike({ 'paypal-cert-url': 'https://api.paypal.com/v1/notifications/certs/CERT-1' }), CERT_REFUSED],
      [lookalike({ 'paypal-transmission-time': minutesFromNow(-6) }), STALE],
      [lookalike({ 'paypal-transmission-time': minutesFromNow(6) }), STALE],
      [
        lookalike({ 'paypal-transmission-time': 'yesterday' }),
        'Malformed PAYPAL-TRANSMISSION-TIME: expected an Internet date-time (RFC 3339, e.g. 2026-01-31T12:00:00Z)',
      ],
      [
        lookalike({ 'paypal-transmission-sig': 'not base64!' }),
        'Malformed PAYPAL-TRANSMISSION-SIG: expected a base64 signature of up to 500 characters',
      ],
      [
        lookalike({ 'paypal-transmission-sig': randomBytes(600).toString('base64') }),
        'Malformed PAYPAL-TRANSMISSION-SIG: expected a base64 signature of up to 500 characters',
      ],
      [
        lookalike({ 'paypal-transmission-id': '1234567890' }),
        "Malformed PAYPAL-TRANSMISSION-ID: expected PayPal's transmission id (up to 50 characters, no spaces)",
      ],
      [
        lookalike({ 'paypal-transmission-id': 'a'.repeat(51) }),
        "Malformed PAYPAL-TRANSMISSION-ID: expected PayPal's transmission id (up to 50 characters, no spaces)",
      ],
      [
        lookalike({ 'paypal-auth-algo': 'SHA256-RSA' }),
        'Malformed PAYPAL-AUTH-ALGO: expected letters and digits, up to 100 (PayPal sends SHA256withRSA)',
      ],
      [lookalike({ 'paypal-cert-url': '' }), 'Missing PayPal webhook header(s): PAYPAL-CERT-URL'],
      [lookalike({}, '[1, 2]'), 'Malformed webhook body: expected a JSON object'],
      [
        lookalike({}, JSON.stringify({ id: 'WH-1', resource: {} })),
        'Malformed PayPal event: expected its id and event_type (strings of letters, digits, ".", "_" or "-", up to 100)',
      ],
    ];
    for (const [request, message] of cases) {
      const res = await postWebhook(`/webhooks/paypal/${m.id}`, request.body, request.headers);
      expect(res.body.message, JSON.stringify(request.headers)).toBe(message);
      expectError(res, 400, message);
    }
    expect(paypal.calls.slice(calls)).toEqual([]);
    // Counted per reason, nothing of the requests kept (no header value is echoed in a reason).
    expect(await rejectionsOf(m)).toEqual({
      [CERT_REFUSED]: 7,
      [STALE]: 2,
      'Malformed PAYPAL-TRANSMISSION-TIME: expected an Internet date-time (RFC 3339, e.g. 2026-01-31T12:00:00Z)': 1,
      'Malformed PAYPAL-TRANSMISSION-SIG: expected a base64 signature of up to 500 characters': 2,
      "Malformed PAYPAL-TRANSMISSION-ID: expected PayPal's transmission id (up to 50 characters, no spaces)": 2,
      'Malformed PAYPAL-AUTH-ALGO: expected letters and digits, up to 100 (PayPal sends SHA256withRSA)': 1,
      'Missing PayPal webhook header(s): PAYPAL-CERT-URL': 1,
      'Malformed webhook body: expected a JSON object': 1,
      'Malformed PayPal event: expected its id and event_type (strings of letters, digits, ".", "_" or "-", up to 100)': 1,
    });
  });

  it('a live integration takes the live certificate hosts only', async () => {
    const m = await createMerchant();
    expect((await connect(m, { environment: 'live' })).status).toBe(200);
    const calls = paypal.calls.length;
    const sandboxCert = lookalike();
    expectError(
      await postWebhook(`/webhooks/paypal/${m.id}`, sandboxCert.body, sandboxCert.headers),
      400,
      "Invalid PAYPAL-CERT-URL: not a certificate of PayPal's live environment (https://api.paypal.com/v1/notifications/certs/ or https://api-m.paypal.com/v1/notifications/certs/…)",
    );
    expect(paypal.calls.slice(calls)).toEqual([]);
    // PAYPAL_API_BASE_URL points every environment at the local PayPal: a live-shaped request reaches it.
    const liveCert = lookalike({
      'paypal-cert-url': 'https://api.paypal.com/v1/notifications/certs/CERT-89bac2a4-8a4a5a63-2c5c4c0d',
    });
    expectError(await postWebhook(`/webhooks/paypal/${m.id}`, liveCert.body, liveCert.headers), 400, NOT_VERIFIED);
    expect(paypal.calls.slice(calls)).toEqual([TOKEN, VERIFY]);
  });
});

describe('PayPal access tokens: one per organization and credentials until it expires', () => {
  it('webhooks to verify reuse the token sending took (N webhooks, no token call); concurrent ones share one; new credentials or a 401 take a new one; genuine webhooks and sends still work', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 12, { payout_email: 'jane.paypal@example.com' });
    expect((await connect(m)).status).toBe(200);
    const tokens = () => paypal.callsTo(TOKEN);
    const verifications = () => paypal.callsTo(VERIFY);
    const t0 = tokens();
    const v0 = verifications();
    expect((await m.api.post('/api/payouts/send', { payout_ids: [p.id] })).status).toBe(202);
    await sendsSettled();
    expect(tokens() - t0).toBe(1);

    for (let i = 0; i < 5; i++) {
      const forged = lookalike();
      expectError(await postWebhook(`/webhooks/paypal/${m.id}`, forged.body, forged.headers), 400, NOT_VERIFIED);
    }
    expect(verifications() - v0).toBe(5);
    expect(tokens() - t0).toBe(1);

    // PayPal's own webhook is verified with the same token and settles the payout.
    paypal.setItem(p.id, 'SUCCESS');
    const hook = paypal.webhookFor(p.id, 'SUCCEEDED');
    const res = await postWebhook(`/webhooks/paypal/${m.id}`, hook.body, hook.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.webhook).toEqual({
      provider: 'paypal_payouts',
      event_id: JSON.parse(hook.body).id,
      event_type: 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED',
      outcome: 'processed',
      detail: `Payout ${p.id} paid`,
    });
    expect((await payout(m, p.id)).status).toBe('paid');
    expect(tokens() - t0).toBe(1);

    // Another organization has a token of its own; its first five webhooks at once make one token call.
    const other = await createMerchant();
    expect((await connect(other)).status).toBe(200);
    const t1 = tokens();
    const burst = await Promise.all(
      Array.from({ length: 5 }, () => lookalike()).map((forged) =>
        postWebhook(`/webhooks/paypal/${other.id}`, forged.body, forged.headers),
      ),
    );
    for (const answer of burst) expectError(answer, 400, NOT_VERIFIED);
    expect(tokens() - t1).toBe(1);

    // The merchant rotates the secret and stores it: the token of the old credentials is not used for the new ones.
    paypal.rotateSecret();
    expect((await connect(m)).status).toBe(200);
    const t2 = tokens();
    const afterRotation = lookalike();
    expectError(
      await postWebhook(`/webhooks/paypal/${m.id}`, afterRotation.body, afterRotation.headers),
      400,
      NOT_VERIFIED,
    );
    expect(tokens() - t2).toBe(1);

    // PayPal stops taking the tokens (401): the call is made once more with a new token, which the next calls reuse.
    paypal.revokeTokens();
    const t3 = tokens();
    const v3 = verifications();
    for (let i = 0; i < 2; i++) {
      const forged = lookalike();
      expectError(await postWebhook(`/webhooks/paypal/${m.id}`, forged.body, forged.headers), 400, NOT_VERIFIED);
    }
    expect({ tokens: tokens() - t3, verifications: verifications() - v3 }).toEqual({ tokens: 1, verifications: 3 });

    // Sending uses the same token: a new payout goes out without a token call.
    const next = await pendingPayout(m, 7);
    const sent = await m.api.post('/api/payouts/send', { payout_ids: [next.id] });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await sendsSettled();
    expect((await payout(m, next.id)).status).toBe('processing');
    expect(paypal.item(next.id)?.payout_item.amount).toEqual({ value: '7.00', currency: 'USD' });
    expect(tokens() - t3).toBe(1);
  });
});

describe('PayPal verifications: bounded per organization, across instances', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
  });

  /** Another instance of the service on the same database, counting its limits in the same store. */
  async function instance(rateLimiters: RateLimiterFactory): Promise<string> {
    const { db } = await testServer();
    const server: Server = await new Promise((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => resolve(s));
    });
    servers.push(server);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { listener } = createApp({
      orm: db.orm,
      rateLimiters,
      paypalWebhookVerifications: { max: 3, windowSeconds: 60 },
      config: {
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        API_KEY_CACHE_TTL_MS: 5_000,
        PUBLIC_BASE_URL: base,
        ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      },
    });
    server.on('request', listener);
    return base;
  }

  async function post(
    base: string,
    organizationId: string,
    request: { headers: Record<string, string>; body: string },
  ): Promise<ApiResponse> {
    const path = `/webhooks/paypal/${organizationId}`;
    const res = await fetch(base + path, { method: 'POST', headers: request.headers, body: request.body });
    const text = await res.text();
    assertDocumentedResponse('POST', path, res.status, text, res.headers.get('content-type'));
    return { status: res.status, body: JSON.parse(text), headers: res.headers };
  }

  it('past the bound, 429 with Retry-After and nothing asked of PayPal; counted in the log; other organizations keep their own budget', async () => {
    const { db } = await testServer();
    // The store the service uses for every rate limit on a real PostgreSQL (main.ts), shared by both instances.
    const rateLimiters = createRateLimiterFactory(
      { DATABASE_URL: 'postgres://configured' },
      pino({ level: 'silent' }),
      db.orm,
    );
    expect(rateLimiters.store).toBe('postgres');
    const [a, b] = [await instance(rateLimiters), await instance(rateLimiters)];
    const m = await createMerchant();
    expect((await connect(m)).status).toBe(200);
    const other = await createMerchant();
    expect((await connect(other)).status).toBe(200);

    const v0 = paypal.callsTo(VERIFY);
    for (const base of [a, b, a]) expectError(await post(base, m.id, lookalike()), 400, NOT_VERIFIED);
    expect(paypal.callsTo(VERIFY) - v0).toBe(3);

    const calls = paypal.calls.length;
    const limited =
      'Too many PayPal webhooks to verify for this organization (at most 3 per 60 s): refused without asking PayPal; PayPal delivers the event again later';
    for (const base of [b, a]) {
      const refused = await post(base, m.id, lookalike());
      expectError(refused, 429, limited);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    expect(paypal.calls.slice(calls)).toEqual([]);
    // What cannot be PayPal's is still refused first, without counting against the bound.
    expectError(await post(a, m.id, lookalike({ 'paypal-transmission-time': minutesFromNow(-10) })), 400, STALE);

    // Another organization's webhooks are verified as before.
    expectError(await post(b, other.id, lookalike()), 400, NOT_VERIFIED);
    expect(paypal.calls.slice(calls)).toEqual([TOKEN, VERIFY]);

    expect(await rejectionsOf(m)).toEqual({ [NOT_VERIFIED]: 3, [limited]: 2, [STALE]: 1 });
  });
});
