import { randomUUID } from 'node:crypto';
import { beforeEach, expect, it } from 'vitest';
import { merchantWithSecret, type Merchant } from '../webhooks/helpers.js';
import { polarSigned } from '../webhooks/signers.js';
import { describePublished, published } from '../webhooks/published/fixtures.js';
import { conversionOf, customerOf, expectOutcome } from '../webhooks/published/walk.js';

const SECRET = 'polar_whs_coupon_8Fg2Hj5Kl9Zx3Cv6';

describePublished("coupon codes from a provider's own discount fields (Polar's published order.paid)", () => {
  let m: Merchant;
  const send = (data: Record<string, unknown>) => {
    const payload = published('polar', 'order.paid.json');
    return polarSigned(m.id, SECRET, JSON.stringify({ ...payload, timestamp: new Date().toISOString(), data }));
  };
  beforeEach(async () => {
    m = await merchantWithSecret('polar', SECRET);
  });

  it("an order without referral metadata, paid with the affiliate's code (order.discount.code), is attributed to the code's owner; the customer's e-mail is kept", async () => {
    expect((await m.api.post('/api/coupons', { code: 'Polar10', affiliate_id: m.affiliate.id })).status).toBe(201);
    const order = published('polar', 'order.paid.json').data;
    const customer = randomUUID();
    Object.assign(order, {
      id: randomUUID(),
      customer_id: customer,
      metadata: {},
      subscription: { ...order.subscription, metadata: {} },
      checkout: null,
    });
    order.discount = { ...order.discount, code: 'POLAR10' };
    order.customer = { ...order.customer, id: customer, email: 'buyer@example.org' };
    await expectOutcome(send(order), 'processed');
    expect(await conversionOf(m, order.id)).toMatchObject({
      affiliate_id: m.affiliate.id,
      customer_id: customer,
      commission_amount: 27,
    });
    expect(await customerOf(m, customer)).toMatchObject({ affiliate_id: m.affiliate.id, email: 'buyer@example.org' });
  });
});
