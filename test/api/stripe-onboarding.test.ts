import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, createOrganization, expectError } from '../support/api.js';
import { partnerSession } from '../support/partner-session.js';
import { testServer } from '../support/server.js';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';
import { StripeConnectStandIn } from '../support/stripe-connect-standin.js';

/**
 * Stripe Connect onboarding (shared/spec/payout-rails.md, "Partners"), against a local Stripe that
 * speaks the documented API (test/support/stripe-connect-standin.ts: POST /v1/accounts,
 * POST /v1/account_links, form-encoded, Bearer secret key, Idempotency-Key): one Express account per
 * partner, created once and reused, and a fresh onboarding link each time; the partner's own
 * payout method in the portal.
 */

let stripe: StripeConnectStandIn;
// PayPal credentials are tried when saved (the paypal_payouts integration below): a local PayPal takes them.
let paypal: PayPalStandIn;
const saved = process.env.STRIPE_API_BASE_URL;
const savedPayPal = process.env.PAYPAL_API_BASE_URL;
beforeAll(async () => {
  stripe = await new StripeConnectStandIn().start();
  paypal = await new PayPalStandIn().start();
  process.env.STRIPE_API_BASE_URL = stripe.baseUrl;
  process.env.PAYPAL_API_BASE_URL = paypal.baseUrl;
});
afterAll(async () => {
  if (saved === undefined) delete process.env.STRIPE_API_BASE_URL;
  else process.env.STRIPE_API_BASE_URL = saved;
  if (savedPayPal === undefined) delete process.env.PAYPAL_API_BASE_URL;
  else process.env.PAYPAL_API_BASE_URL = savedPayPal;
  await stripe?.stop();
  await paypal?.stop();
});

type Merchant = Awaited<ReturnType<typeof createMerchant>>;

async function withStripe(program: Record<string, unknown> = {}): Promise<Merchant> {
  const m = await createMerchant(program);
  const res = await m.api.put('/api/integrations/stripe_connect', { secret_key: stripe.secretKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return m;
}

const requestsFor = (email: string) => {
  const accounts = stripe.requests.filter((r) => r.path === '/v1/accounts' && r.params.email === email);
  const ids = new Set([...stripe.accounts.values()].filter((a) => a.email === email).map((a) => a.id as string));
  return {
    accounts,
    links: stripe.requests.filter((r) => r.path === '/v1/account_links' && ids.has(r.params.account)),
  };
};

describe('POST /api/affiliates/{id}/stripe-onboarding', () => {
  it('creates an Express account once, stores it on the affiliate, and answers an account_onboarding link back to the dashboard; a second call reuses the account', async () => {
    const m = await withStripe();
    const { baseUrl } = await testServer();
    const first = await m.api.post(`/api/affiliates/${m.affiliate.id}/stripe-onboarding`);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const account: string = first.body.data.stripe_account_id;
    expect(account).toMatch(/^acct_/);
    expect(first.body.data).toEqual({
      url: expect.stringMatching(new RegExp(`^https://connect\\.stripe\\.com/setup/e/${account}/`)),
      expires_at: expect.any(String),
      stripe_account_id: account,
    });
    expect(Date.parse(first.body.data.expires_at)).toBeGreaterThan(Date.now());

    const sent = requestsFor(m.affiliate.email);
    expect(sent.accounts).toEqual([
      {
        method: 'POST',
        path: '/v1/accounts',
        params: {
          type: 'express',
          email: m.affiliate.email,
          'capabilities[transfers][requested]': 'true',
          'metadata[organization_id]': m.id,
        },
        idempotencyKey: expect.stringMatching(/^svc-connect-account-[0-9a-f]{40}$/),
      },
    ]);
    const page = `${baseUrl}/dashboard/affiliates/${m.affiliate.id}`;
    expect(sent.links.map((l) => l.params)).toEqual([
      {
        account,
        type: 'account_onboarding',
        refresh_url: `${page}?stripe_onboarding=refresh`,
        return_url: `${page}?stripe_onboarding=return`,
      },
    ]);
    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}`)).body.data.affiliate).toMatchObject({
      stripe_account_id: account,
    });

    const again = await m.api.post(`/api/affiliates/${m.affiliate.id}/stripe-onboarding`);
    expect(again.body.data.stripe_account_id).toBe(account);
    expect(again.body.data.url).not.toBe(first.body.data.url);
    expect(requestsFor(m.affiliate.email).accounts).toHaveLength(1);
    expect(requestsFor(m.affiliate.email).links).toHaveLength(2);
  });

  it("the account is the partner's: their other program's membership gets it too, without a second account", async () => {
    const m = await withStripe();
    const second = await m.api.post('/api/programs', { name: 'Second', commission_value: 5 });
    const other = await m.api.post('/api/affiliates', {
      email: m.affiliate.email,
      program_id: second.body.data.program.id,
    });
    const first = await m.api.post(`/api/affiliates/${m.affiliate.id}/stripe-onboarding`);
    expect(
      (await m.api.get(`/api/affiliates/${other.body.data.affiliate.id}`)).body.data.affiliate.stripe_account_id,
    ).toBe(first.body.data.stripe_account_id);
    const viaOther = await m.api.post(`/api/affiliates/${other.body.data.affiliate.id}/stripe-onboarding`);
    expect(viaOther.body.data.stripe_account_id).toBe(first.body.data.stripe_account_id);
    expect(requestsFor(m.affiliate.email).accounts).toHaveLength(1);
  });

  it('409 without a stripe_connect integration; 502 when Stripe is down, nothing stored, and the retry makes one account', async () => {
    const bare = await createMerchant();
    expectError(
      await bare.api.post(`/api/affiliates/${bare.affiliate.id}/stripe-onboarding`),
      409,
      "Stripe Connect is not set up: an owner adds the Stripe platform's secret key on the Integrations page (PUT /api/integrations/stripe_connect) first",
    );

    const m = await withStripe();
    stripe.failing = true;
    try {
      expectError(
        await m.api.post(`/api/affiliates/${m.affiliate.id}/stripe-onboarding`),
        502,
        /^Stripe did not answer/,
      );
    } finally {
      stripe.failing = false;
    }
    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}`)).body.data.affiliate.stripe_account_id).toBeNull();
    expect((await m.api.post(`/api/affiliates/${m.affiliate.id}/stripe-onboarding`)).status).toBe(200);
    expect(requestsFor(m.affiliate.email).accounts).toHaveLength(1);
  });

  it("another organization's affiliate is 403, an unknown one 404, and Stripe is not called", async () => {
    const m = await withStripe();
    const other = await createOrganization();
    const before = stripe.requests.length;
    expectError(await other.api.post(`/api/affiliates/${m.affiliate.id}/stripe-onboarding`), 403);
    expectError(
      await m.api.post('/api/affiliates/00000000-0000-4000-8000-000000000000/stripe-onboarding'),
      404,
      'Affiliate not found',
    );
    expect(stripe.requests.length).toBe(before);
  });
});

describe('the partner in the portal', () => {
  it('connects with Stripe (back to the portal), then chooses Stripe; before connecting, Stripe is 409', async () => {
    const m = await withStripe();
    const { baseUrl } = await testServer();
    const partner = await partnerSession(m.id, m.affiliate.email);
    expect((await partner.get('/partner/api/payout-settings')).body.data).toEqual({
      payout_method: 'manual',
      payout_email: m.affiliate.email,
      stripe_connected: false,
      available_methods: ['manual', 'stripe'],
    });
    expectError(
      await partner.put('/partner/api/payout-settings', { payout_method: 'stripe' }),
      409,
      'payout_method: connect with Stripe first',
    );

    const link = await partner.post('/partner/api/stripe-onboarding', {});
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    const portal = `${baseUrl}/portal/${m.id}`;
    expect(requestsFor(m.affiliate.email).links.at(-1)!.params).toMatchObject({
      refresh_url: `${portal}?stripe_onboarding=refresh`,
      return_url: `${portal}?stripe_onboarding=return`,
    });
    stripe.completeOnboarding(link.body.data.stripe_account_id);

    const chosen = await partner.put('/partner/api/payout-settings', { payout_method: 'stripe' });
    expect(chosen.body.data).toEqual({
      payout_method: 'stripe',
      payout_email: m.affiliate.email,
      stripe_connected: true,
      available_methods: ['manual', 'stripe'],
    });
    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}`)).body.data.affiliate).toMatchObject({
      payout_method: 'stripe',
      stripe_account_id: link.body.data.stripe_account_id,
    });
    // A merchant without Stripe: the portal's Stripe button answers why.
    const bare = await createMerchant();
    const barePartner = await partnerSession(bare.id, bare.affiliate.email);
    expectError(
      await barePartner.post('/partner/api/stripe-onboarding', {}),
      409,
      'This merchant does not pay through Stripe',
    );
  });

  it('PayPal and Wise need the rail set up by the merchant and a payout e-mail', async () => {
    const m = await withStripe();
    const partner = await partnerSession(m.id, m.affiliate.email);
    expectError(
      await partner.put('/partner/api/payout-settings', { payout_method: 'paypal' }),
      409,
      'payout_method: this merchant does not pay by paypal',
    );
    const connected = await m.api.put('/api/integrations/paypal_payouts', {
      client_id: paypal.clientId,
      client_secret: paypal.clientSecret,
      environment: 'sandbox',
    });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    expectError(
      await partner.put('/partner/api/payout-settings', { payout_method: 'paypal' }),
      400,
      'payout_email: your PayPal e-mail is required',
    );
    const chosen = await partner.put('/partner/api/payout-settings', {
      payout_method: 'paypal',
      payout_email: 'Pay.Me@Example.com',
    });
    expect(chosen.body.data).toMatchObject({
      payout_method: 'paypal',
      payout_email: 'pay.me@example.com',
      available_methods: ['manual', 'paypal', 'stripe'],
    });
    expect((await m.api.get(`/api/affiliates/${m.affiliate.id}`)).body.data.affiliate).toMatchObject({
      payout_method: 'paypal',
      payout_email: 'pay.me@example.com',
    });
  });
});
