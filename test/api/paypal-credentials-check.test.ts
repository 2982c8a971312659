import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, expectError } from '../support/api.js';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';

/*
 * PayPal Payouts credentials are tried when the merchant saves them (issue 47, item 11): one token
 * call (POST /v1/oauth2/token, https://developer.paypal.com/api/rest/authentication/) at the local
 * PayPal (test/support/rails/paypal-standin.ts), which answers 401 invalid_client to a wrong
 * secret as PayPal does. Refused: 400 naming the problem; unreachable: 502; never a silent save.
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

const TOKEN = 'POST /v1/oauth2/token';
const REFUSED =
  'PayPal refused these credentials (401 invalid_client: Client Authentication failed): check client_id, client_secret and environment (an app\'s sandbox credentials with "sandbox", its live ones with "live": PayPal developer dashboard, Apps & Credentials); nothing was saved';

async function paypalIntegration(m: Awaited<ReturnType<typeof createOrganization>>) {
  const list = await m.api.get('/api/integrations');
  return list.body.data.integrations.find((i: { provider: string }) => i.provider === 'paypal_payouts');
}

describe('PUT /api/integrations/paypal_payouts checks the credentials with PayPal', () => {
  it("a wrong secret: 400 with PayPal's reason, nothing saved; the right one: 200, configured", async () => {
    const m = await createOrganization();
    const calls = paypal.callsTo(TOKEN);
    expectError(
      await m.api.put('/api/integrations/paypal_payouts', {
        client_id: paypal.clientId,
        client_secret: 'not-the-secret',
        environment: 'sandbox',
      }),
      400,
      REFUSED,
    );
    expect(paypal.callsTo(TOKEN)).toBe(calls + 1);
    expect(await paypalIntegration(m)).toMatchObject({ configured: false, updated_at: null });

    const saved = await m.api.put('/api/integrations/paypal_payouts', {
      client_id: paypal.clientId,
      client_secret: paypal.clientSecret,
      environment: 'sandbox',
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.data.integration).toMatchObject({ configured: true, environment: 'sandbox' });
    expect(paypal.callsTo(TOKEN)).toBe(calls + 2);

    // Replacing good credentials with refused ones keeps the good ones.
    const before = (await paypalIntegration(m)).updated_at;
    expectError(
      await m.api.put('/api/integrations/paypal_payouts', {
        client_id: 'someone-else',
        client_secret: paypal.clientSecret,
        environment: 'sandbox',
      }),
      400,
      REFUSED,
    );
    expect(await paypalIntegration(m)).toMatchObject({ configured: true, updated_at: before });
  });

  it('PayPal unreachable: 502, nothing saved', async () => {
    const m = await createOrganization();
    const gone = await new PayPalStandIn().start();
    await gone.stop();
    process.env.PAYPAL_API_BASE_URL = gone.baseUrl;
    try {
      expectError(
        await m.api.put('/api/integrations/paypal_payouts', {
          client_id: paypal.clientId,
          client_secret: paypal.clientSecret,
          environment: 'live',
        }),
        502,
        /^PayPal could not be reached to check these credentials \(POST \/v1\/oauth2\/token: .+\): nothing was saved; try again$/,
      );
    } finally {
      process.env.PAYPAL_API_BASE_URL = paypal.baseUrl;
    }
    expect(await paypalIntegration(m)).toMatchObject({ configured: false });
  });
});
