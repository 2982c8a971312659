import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayPalStandIn } from '../support/rails/paypal-standin.js';
import { call, startService, type PeopleServer } from './support/people.js';
import { merchantWithProgram, signedInPartner } from './support/portal.js';
import { startSmtpReceiver, type SmtpReceiver } from './support/smtp.js';

/** A payout its provider did not pay, as the partner learns it: the portal's payouts (status, reason) and an e-mail. */
let smtp: SmtpReceiver;
let service: PeopleServer;
let base: string;
let paypal: PayPalStandIn;
const previousBase = process.env.PAYPAL_API_BASE_URL;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  paypal = await new PayPalStandIn().start();
  process.env.PAYPAL_API_BASE_URL = paypal.baseUrl;
  service = await startService({ SMTP_URL: smtp.url, MAIL_FROM: 'Shop partners <partners@shop.example>' });
  base = service.baseUrl;
});
afterAll(async () => {
  if (previousBase === undefined) delete process.env.PAYPAL_API_BASE_URL;
  else process.env.PAYPAL_API_BASE_URL = previousBase;
  await service?.close();
  await smtp?.close();
  await paypal?.stop();
});

describe('a failed payout, seen by the partner', () => {
  it('the portal shows failed with the reason, and the partner gets one e-mail', async () => {
    const m = await merchantWithProgram(base, { signup: 'open', hold_days: 0, currency: 'USD' });
    const partner = await signedInPartner(base, smtp, m.organizationId, m.program.id);
    expect(
      (
        await call(base, 'PATCH', `/api/affiliates/${partner.affiliateId}`, {
          headers: m.key,
          body: { payout_method: 'paypal' },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call(base, 'POST', '/api/commissions', {
          headers: m.key,
          body: { affiliate_id: partner.affiliateId, amount: 33, description: 'bonus' },
        })
      ).status,
    ).toBe(201);
    const [created] = (await call(base, 'POST', '/api/payouts', { headers: m.key, body: {} })).body.data.payouts;
    const put = await call(base, 'PUT', '/api/integrations/paypal_payouts', {
      headers: m.key,
      body: {
        client_id: paypal.clientId,
        client_secret: paypal.clientSecret,
        environment: 'sandbox',
        webhook_id: paypal.webhookId,
      },
    });
    expect(put.status).toBe(200);
    expect(
      (await call(base, 'POST', '/api/payouts/send', { headers: m.key, body: { payout_ids: [created.id] } })).status,
    ).toBe(202);
    const inFlight = (await call(base, 'GET', '/partner/api/payouts', { headers: { cookie: partner.cookie } })).body
      .data.payouts[0];
    expect(inFlight).toMatchObject({ id: created.id, status: 'processing', failure_reason: null });

    paypal.setItem(created.id, 'FAILED', { name: 'RECEIVER_UNCONFIRMED', message: 'Receiver is unconfirmed' });
    const hook = paypal.webhookFor(created.id, 'FAILED');
    for (let i = 0; i < 2; i++)
      expect(
        (
          await fetch(`${base}/webhooks/paypal/${m.organizationId}`, {
            method: 'POST',
            headers: hook.headers,
            body: hook.body,
          })
        ).status,
      ).toBe(200);

    const seen = await call(base, 'GET', '/partner/api/payouts', { headers: { cookie: partner.cookie } });
    expect(seen.body.data.payouts[0]).toMatchObject({
      id: created.id,
      status: 'failed',
      failure_reason: 'PayPal: FAILED (RECEIVER_UNCONFIRMED: Receiver is unconfirmed)',
      paid_at: null,
    });
    expect(seen.body.data.balances[0]).toMatchObject({ approved: 33, in_payout: 0 });
    const mail = await smtp.next(partner.email);
    const merchant = (await call(base, 'GET', '/api/me', { headers: m.key })).body.data.organization.name;
    expect(mail.subject).toBe(`Your payout of 33.00 USD from ${merchant} could not be paid`);
    expect(mail.text).toContain('Reason: PayPal: FAILED (RECEIVER_UNCONFIRMED: Receiver is unconfirmed).');
    // The merchant and its program are named, and the link is the partner's own portal, whole (issue 47, item 8).
    expect(mail.text).toContain(`from ${merchant} ("Partners")`);
    expect(mail.text).toContain(`Your partner portal: ${base}/portal/${m.organizationId}`);
    // The redelivered event sent no second mail.
    await new Promise((r) => setTimeout(r, 300));
    expect(
      smtp.mails.filter((x) => x.to.includes(partner.email) && x.subject.includes('could not be paid')),
    ).toHaveLength(1);
  });
});
