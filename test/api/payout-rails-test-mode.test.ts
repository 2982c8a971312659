import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../support/api.js';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';

/* shared/spec/test-mode.md, "What test mode never does": a test payout "sent" through a rail moves no money. */
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

describe('payout rails in test mode', () => {
  it('simulates: nothing reaches a provider (no integration needed); paid at once, or failed without a destination; simulated: true', async () => {
    const org = await createOrganization();
    const t = org.testApi;
    const program = (await t.post('/api/programs', { name: 'Test', commission_value: 30, currency: 'USD' })).body.data
      .program;
    const viaPayPal = (
      await t.post('/api/affiliates', { email: 'pp@example.com', program_id: program.id, name: 'Pat' })
    ).body.data.affiliate;
    const viaStripe = (
      await t.post('/api/affiliates', { email: 'st@example.com', program_id: program.id, name: 'Sam' })
    ).body.data.affiliate;
    expect(
      (await t.patch(`/api/affiliates/${viaPayPal.id}`, { payout_method: 'paypal' })).body.data.affiliate,
    ).toMatchObject({ payout_method: 'paypal', stripe_account_id: null });
    expect((await t.patch(`/api/affiliates/${viaStripe.id}`, { payout_method: 'stripe' })).status).toBe(200);
    for (const a of [viaPayPal, viaStripe])
      expect((await t.post('/api/commissions', { affiliate_id: a.id, amount: 12, description: 'x' })).status).toBe(201);
    const created = (await t.post('/api/payouts', {})).body.data.payouts;
    expect(created).toHaveLength(2);

    const sent = await t.post('/api/payouts/send', { payout_ids: created.map((p: any) => p.id) });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const byAffiliate = Object.fromEntries(sent.body.data.payouts.map((p: any) => [p.affiliate_id, p]));
    expect(byAffiliate[viaPayPal.id]).toMatchObject({
      status: 'paid',
      method: 'paypal',
      simulated: true,
      failure_reason: null,
      paid_at: expect.any(String),
    });
    expect(byAffiliate[viaStripe.id]).toMatchObject({
      status: 'failed',
      method: 'stripe',
      simulated: true,
      failure_reason: `Simulated: affiliate ${viaStripe.id} has no stripe_account_id (Stripe Connect onboarding not finished)`,
    });
    const commissions = (await t.get('/api/commissions')).body.data.commissions;
    expect(Object.fromEntries(commissions.map((c: any) => [c.affiliate_id, c.status]))).toEqual({
      [viaPayPal.id]: 'paid',
      [viaStripe.id]: 'approved',
    });
    expect(paypal.createRequests).toEqual([]);

    // The live organization sees none of it.
    expect((await org.api.get('/api/payouts')).body.data.payouts).toEqual([]);
  });
});
