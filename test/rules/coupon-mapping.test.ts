import { expect, it } from 'vitest';
import { chargebeeAdapter } from '../../server/src/webhooks/chargebee.js';
import { paddleAdapter } from '../../server/src/webhooks/paddle.js';
import { stripeAdapter } from '../../server/src/webhooks/stripe.js';
import type { WebhookAction } from '../../server/src/webhooks/types.js';
import { describePublished, published } from '../webhooks/published/fixtures.js';

/**
 * shared/spec/ledger.md: "Provider webhooks read the code from the payment's own discount
 * fields". Each provider's published payment event, paid with a discount code, maps to a payment
 * carrying that code as its `coupon` (the weakest attribution input; test/rules/program-rules
 * holds what a coupon then attributes). Polar's is walked end to end in coupon-webhooks.test.ts.
 */
const couponOf = (actions: WebhookAction[]) => actions.find((a) => a.kind === 'payment')?.coupon;

describePublished("coupon codes from each provider's own discount fields", () => {
  it('Stripe: an invoice paid with a promotion code, expanded (its code) or not (its id)', () => {
    const invoice = {
      ...published('stripe', 'invoice.json'),
      status: 'paid',
      amount_paid: 4999,
      total: 4999,
      subtotal: 4999,
    };
    const event = (discounts: unknown[]) => ({
      id: 'evt_coupon',
      type: 'invoice.paid',
      payload: { type: 'invoice.paid', data: { object: { ...invoice, discounts } } },
    });
    expect(
      couponOf(stripeAdapter.map(event([{ id: 'di_1', promotion_code: { id: 'promo_1', code: 'SPRING20' } }]))),
    ).toBe('SPRING20');
    expect(couponOf(stripeAdapter.map(event([{ id: 'di_1', promotion_code: 'promo_1' }])))).toBe('promo_1');
    expect(couponOf(stripeAdapter.map(event([])))).toBeUndefined();
  });

  it("Paddle: a completed transaction's discount code, else its discount id", () => {
    const payload = published('paddle', 'transaction.completed.json');
    const event = (extra: Record<string, unknown>) => ({
      id: payload.event_id,
      type: 'transaction.completed',
      payload: { ...payload, data: { ...payload.data, ...extra } },
    });
    expect(
      couponOf(paddleAdapter.map(event({ discount_id: 'dsc_01', discount: { id: 'dsc_01', code: 'PADDLE10' } }))),
    ).toBe('PADDLE10');
    expect(couponOf(paddleAdapter.map(event({ discount_id: 'dsc_01', discount: null })))).toBe('dsc_01');
    expect(couponOf(paddleAdapter.map(event({ discount_id: null, discount: null })))).toBeUndefined();
  });

  it("Chargebee: a paid invoice's coupon discount, by the code of its coupon set, else the coupon id", () => {
    const event = (discounts: unknown[]) => ({
      id: 'ev_coupon',
      type: 'payment_succeeded',
      payload: {
        occurred_at: 1_764_000_000,
        content: {
          customer: { id: 'cb_cus_1', email: 'buyer@example.org' },
          invoice: {
            id: 'inv_cb_1',
            currency_code: 'USD',
            total: 5000,
            amount_paid: 5000,
            tax: 0,
            paid_at: 1_764_000_000,
            customer_id: 'cb_cus_1',
            discounts,
          },
        },
      },
    });
    expect(
      couponOf(
        chargebeeAdapter.map(
          event([{ entity_type: 'document_level_coupon', entity_id: 'spring-coupon', coupon_set_code: 'CB-SPRING' }]),
        ),
      ),
    ).toBe('CB-SPRING');
    expect(
      couponOf(chargebeeAdapter.map(event([{ entity_type: 'item_level_coupon', entity_id: 'spring-coupon' }]))),
    ).toBe('spring-coupon');
    expect(
      couponOf(chargebeeAdapter.map(event([{ entity_type: 'promotional_credits', entity_id: 'credits' }]))),
    ).toBeUndefined();
  });
});
