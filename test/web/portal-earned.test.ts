import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/people.js';
import {
  type MailedService,
  merchantWithProgram,
  signedInPartner,
  startServiceWithMail,
  unique,
} from './support/portal.js';
import type { SmtpReceiver } from './support/smtp.js';

/**
 * "Earned" is one figure (server/src/modules/commissions/earned.ts): the partner's stats and the
 * merchant's report per affiliate give the same amount for the same partner and period, refunds
 * and held commissions included.
 */
let smtp: SmtpReceiver;
let service: MailedService;
let base: string;

beforeAll(async () => {
  service = await startServiceWithMail();
  ({ smtp, baseUrl: base } = service);
});
afterAll(() => service?.close());

const DAY_MS = 86_400_000;
function lastDays(days: number) {
  const to = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
  return { from: new Date(to - days * DAY_MS).toISOString(), to: new Date(to).toISOString() };
}

/** A customer of `slug` (signed up by its ref) who pays `amount`; the conversion's id. */
async function sale(key: Record<string, string>, slug: string, amount: number, email?: string): Promise<string> {
  const customerId = `cus_${unique('c').replace(/-/g, '')}`;
  const customer = await call(base, 'POST', '/api/customers', {
    headers: key,
    body: { customer_id: customerId, ref: slug, ...(email ? { email } : {}) },
  });
  expect(customer.status, JSON.stringify(customer.body)).toBe(201);
  const conversion = await call(base, 'POST', '/api/conversions', {
    headers: key,
    body: { external_id: unique('inv'), amount, customer_id: customerId },
  });
  expect(conversion.status, JSON.stringify(conversion.body)).toBe(201);
  return conversion.body.data.conversion.id;
}

describe('earned, in the portal and in the dashboard', () => {
  it('a 100 sale and a refunded 300 sale at 10 %: 10 earned (the 30 reversed counts nothing), the same in the partner stats and the report; a held commission is apart', async () => {
    const m = await merchantWithProgram(base, { signup: 'open', commission_value: 10 });
    const partner = await signedInPartner(base, smtp, m.organizationId, m.program.id);
    await sale(m.key, partner.slug, 100);
    const refunded = await sale(m.key, partner.slug, 300);
    expect((await call(base, 'POST', `/api/conversions/${refunded}/refund`, { headers: m.key, body: {} })).status).toBe(
      200,
    );
    // The partner's own e-mail on the customer: self_referral holds that commission (20).
    await sale(m.key, partner.slug, 200, partner.email);

    const period = lastDays(30);
    const stats = await call(
      base,
      'GET',
      `/partner/api/stats?program_id=${m.program.id}&from=${period.from}&to=${period.to}`,
      { headers: { cookie: partner.cookie } },
    );
    expect(stats.status, JSON.stringify(stats.body)).toBe(200);
    expect(stats.body.data.totals).toEqual({
      clicks: 0,
      signups: 3,
      conversions: 3,
      earned: [{ currency: 'USD', amount: 10 }],
      on_hold: [{ currency: 'USD', amount: 20 }],
    });
    const today = stats.body.data.points.find((p: { earnings: unknown[] }) => p.earnings.length > 0);
    expect(today.earnings).toEqual([{ currency: 'USD', amount: 10 }]);

    const report = await call(
      base,
      'GET',
      `/api/reports/affiliates?from=${period.from}&to=${period.to}&affiliate_id=${partner.affiliateId}`,
      { headers: m.key },
    );
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    expect(report.body.data.affiliates).toHaveLength(1);
    expect(report.body.data.affiliates[0].commissions).toEqual({
      pending: 10,
      approved: 0,
      paid: 0,
      reversed: 30,
      rejected: 0,
      on_hold: 20,
      earned: 10,
    });
  });

  it('after payment a refund is a clawback: earned is net of it, in both', async () => {
    const m = await merchantWithProgram(base, { signup: 'open', commission_value: 10, hold_days: 0 });
    const partner = await signedInPartner(base, smtp, m.organizationId, m.program.id);
    const paidSale = await sale(m.key, partner.slug, 500);
    const payouts = await call(base, 'POST', '/api/payouts', { headers: m.key, body: {} });
    expect(payouts.status, JSON.stringify(payouts.body)).toBe(201);
    expect(
      (await call(base, 'POST', `/api/payouts/${payouts.body.data.payouts[0].id}/paid`, { headers: m.key, body: {} }))
        .status,
    ).toBe(200);
    // Everything paid, no minimum: nothing to pay, short of nothing (not "0.01 more to reach the 0.00 minimum").
    const balance = await call(base, 'GET', '/partner/api/payouts', { headers: { cookie: partner.cookie } });
    expect(balance.body.data.balances[0]).toMatchObject({
      paid: 50,
      approved: 0,
      next_payout: { eligible: false, eligible_from: null, shortfall: 0 },
    });
    expect(
      (await call(base, 'POST', `/api/conversions/${paidSale}/refund`, { headers: m.key, body: { amount: 200 } }))
        .status,
    ).toBe(200);

    const period = lastDays(7);
    const stats = await call(base, 'GET', `/partner/api/stats?from=${period.from}&to=${period.to}`, {
      headers: { cookie: partner.cookie },
    });
    expect(stats.body.data.totals.earned).toEqual([{ currency: 'USD', amount: 30 }]);
    const report = await call(
      base,
      'GET',
      `/api/reports/affiliates?from=${period.from}&to=${period.to}&affiliate_id=${partner.affiliateId}`,
      { headers: m.key },
    );
    expect(report.body.data.affiliates[0].commissions).toMatchObject({ paid: 50, approved: -20, earned: 30 });
  });
});
