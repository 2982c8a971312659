import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, expectError } from '../support/api.js';
import { partnerSession } from '../support/partner-session.js';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';
import {
  commissionStatuses,
  merchantWithPendingPayout,
  payout,
  postWebhook,
  sendsSettled,
  type Merchant,
} from './payout-rails.support.js';

/*
 * A program's require_tax_form holds a payout whenever it would be paid, not only when it is
 * created: POST /api/payouts/send refuses a pending payout that its program holds now (created
 * before the program required a form, or before the form was rejected), with the hold's reason,
 * and sends nothing. Test mode follows the same rule.
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

const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from('Form W-9 '.repeat(20)), Buffer.from('\n%%EOF\n')]);
const upload = { kind: 'w9', file_name: 'w9.pdf', content_base64: PDF.toString('base64') };

const refusal = (payoutId: string, affiliateId: string, status: 'missing' | 'submitted' | 'rejected') =>
  `Payout ${payoutId}: Payout held: tax form ${status}: its program requires an accepted tax form before paying affiliate ${affiliateId}; nothing was sent (cancel the payout to keep its commissions approved until the form is accepted)`;

async function connectPayPal(m: Merchant) {
  const res = await m.api.put('/api/integrations/paypal_payouts', {
    client_id: paypal.clientId,
    client_secret: paypal.clientSecret,
    environment: 'sandbox',
    webhook_id: paypal.webhookId,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

const requireForm = async (api: Merchant['api'], programId: string) =>
  expect((await api.patch(`/api/programs/${programId}`, { require_tax_form: true })).status).toBe(200);
const sentTo = (payoutId: string) =>
  paypal.createRequests.filter((r) => r.items.some((i: any) => i.sender_item_id === payoutId));

describe('POST /api/payouts/send and a program that requires a tax form', () => {
  it("a payout created before the program required a form is refused (409, the hold's reason), by id and by scope; nothing is sent; sent once the form is accepted", async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 20, { payout_email: 'held@example.com' });
    await connectPayPal(m);
    await requireForm(m.api, m.program.id);

    expectError(
      await m.api.post('/api/payouts/send', { payout_ids: [p.id] }),
      409,
      refusal(p.id, m.affiliate.id, 'missing'),
    );
    expectError(await m.api.post('/api/payouts/send', {}), 409, refusal(p.id, m.affiliate.id, 'missing'));
    expectError(
      await m.api.post('/api/payouts/send', { program_id: m.program.id, currency: 'usd' }),
      409,
      refusal(p.id, m.affiliate.id, 'missing'),
    );
    await sendsSettled();
    expect(sentTo(p.id)).toEqual([]);
    expect(await payout(m, p.id)).toMatchObject({ status: 'pending', sent_at: null, provider_reference: null });

    const partner = await partnerSession(m.id, m.affiliate.email);
    expect((await partner.post('/partner/api/tax-form', upload)).status).toBe(201);
    expectError(
      await m.api.post('/api/payouts/send', { payout_ids: [p.id] }),
      409,
      refusal(p.id, m.affiliate.id, 'submitted'),
    );
    expect(sentTo(p.id)).toEqual([]);

    expect((await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/accept`)).status).toBe(200);
    const sent = await m.api.post('/api/payouts/send', { payout_ids: [p.id] });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect(sent.body.data.payouts).toEqual([
      expect.objectContaining({ id: p.id, status: 'processing', method: 'paypal' }),
    ]);
    await sendsSettled();
    expect(sentTo(p.id)).toHaveLength(1);
  });

  it('a payout created while the form was accepted is refused once the merchant rejects the form; with others, none of them is sent', async () => {
    const { m, payout: first } = await merchantWithPendingPayout('paypal', 15, {
      payout_email: 'rejected@example.com',
    });
    await connectPayPal(m);
    await requireForm(m.api, m.program.id);
    // A second partner of another program that requires nothing: sendable on its own.
    const other = (await m.api.post('/api/programs', { name: 'No forms', commission_value: 10, currency: 'USD' })).body
      .data.program;
    const free = (
      await m.api.post('/api/affiliates', { email: `free-${Date.now()}@example.com`, program_id: other.id })
    ).body.data.affiliate;
    expect((await m.api.patch(`/api/affiliates/${free.id}`, { payout_method: 'paypal' })).status).toBe(200);
    expect(
      (await m.api.post('/api/commissions', { affiliate_id: free.id, amount: 5, description: 'earned' })).status,
    ).toBe(201);

    const partner = await partnerSession(m.id, m.affiliate.email);
    await partner.post('/partner/api/tax-form', upload);
    await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/accept`);
    expect(
      (await m.api.post('/api/commissions', { affiliate_id: m.affiliate.id, amount: 30, description: 'earned' }))
        .status,
    ).toBe(201);
    const run = await m.api.post('/api/payouts', {});
    expect(run.body.data.held).toEqual([]);
    const byAffiliate = Object.fromEntries(
      run.body.data.payouts.map((x: { id: string; affiliate_id: string }) => [x.affiliate_id, x]),
    );
    const held = byAffiliate[m.affiliate.id];
    const freePayout = byAffiliate[free.id];
    expect([held.amount, freePayout.amount]).toEqual([30, 5]);

    const rejected = await m.api.post(`/api/affiliates/${m.affiliate.id}/tax-form/reject`, { reason: 'Unsigned' });
    expect(rejected.body.data.payout_hold).toEqual({
      reason: 'tax_form_rejected',
      message: 'Payout held: tax form rejected',
    });
    expectError(
      await m.api.post('/api/payouts/send', { payout_ids: [freePayout.id, held.id] }),
      409,
      refusal(held.id, m.affiliate.id, 'rejected'),
    );
    await sendsSettled();
    expect(sentTo(held.id)).toEqual([]);
    expect(sentTo(freePayout.id)).toEqual([]);
    expect((await payout(m, freePayout.id)).status).toBe('pending');
    // Canceling it keeps its commissions approved until the form is accepted; the rest goes.
    expect((await m.api.post(`/api/payouts/${first.id}/cancel`)).status).toBe(200);
    expect((await m.api.post(`/api/payouts/${held.id}/cancel`)).status).toBe(200);
    expect(
      (await commissionStatuses(m)).every(
        (c: { status: string; payout_id: string | null }) => c.status === 'approved' && c.payout_id === null,
      ),
    ).toBe(true);
    const rest = await m.api.post('/api/payouts/send', {});
    expect(rest.status, JSON.stringify(rest.body)).toBe(202);
    expect(rest.body.data.payouts.map((x: { id: string }) => x.id)).toEqual([freePayout.id]);
    await sendsSettled();
  });

  it('retrying a failed payout that its program now holds answers 409 with the reason; nothing is sent', async () => {
    const { m, payout: p } = await merchantWithPendingPayout('paypal', 10);
    await connectPayPal(m);
    expect((await m.api.post('/api/payouts/send', { payout_ids: [p.id] })).status).toBe(202);
    await sendsSettled();
    paypal.setItem(p.id, 'RETURNED', { name: 'RECEIVER_UNREGISTERED', message: 'Receiver is unregistered' });
    const hook = paypal.webhookFor(p.id, 'RETURNED');
    expect((await postWebhook(`/webhooks/paypal/${m.id}`, hook.body, hook.headers)).status).toBe(200);
    expect((await payout(m, p.id)).status).toBe('failed');

    await requireForm(m.api, m.program.id);
    const before = paypal.createRequests.length;
    expectError(
      await m.api.post(`/api/payouts/${p.id}/retry`, {}),
      409,
      'Payout held: tax form missing: the program requires an accepted tax form before paying this affiliate',
    );
    expect(paypal.createRequests.length).toBe(before);
    expect(await commissionStatuses(m)).toEqual([{ status: 'approved', payout_id: null }]);
  });

  it('test mode: a simulated send is refused the same way, and the payout stays pending', async () => {
    const org = await createOrganization();
    const t = org.testApi;
    const program = (await t.post('/api/programs', { name: 'Test', commission_value: 30, currency: 'USD' })).body.data
      .program;
    const affiliate = (
      await t.post('/api/affiliates', { email: 'held-test@example.com', program_id: program.id, name: 'Pat' })
    ).body.data.affiliate;
    expect((await t.patch(`/api/affiliates/${affiliate.id}`, { payout_method: 'paypal' })).status).toBe(200);
    expect(
      (await t.post('/api/commissions', { affiliate_id: affiliate.id, amount: 12, description: 'x' })).status,
    ).toBe(201);
    const [created] = (await t.post('/api/payouts', {})).body.data.payouts;
    await requireForm(t, program.id);

    expectError(
      await t.post('/api/payouts/send', { payout_ids: [created.id] }),
      409,
      refusal(created.id, affiliate.id, 'missing'),
    );
    expect((await t.get(`/api/payouts/${created.id}`)).body.data.payout).toMatchObject({
      status: 'pending',
      simulated: false,
      paid_at: null,
    });
    expect(sentTo(created.id)).toEqual([]);
  });
});
