import { beforeEach, expect, it } from 'vitest';
import { merchantWithSecret, type Merchant } from '../helpers.js';
import { paddleSigned } from '../signers.js';
import { describePublished, published } from './fixtures.js';
import { conversionOf, customerOf, expectOutcome } from './walk.js';

const SECRET = 'pdl_ntfset_published_2Wc8Rt5Yu1Io4Pa7';
let seq = 0;
const fresh = (prefix: string) => `${prefix}_01walk${Date.now().toString(36)}${(++seq).toString(36)}`;

/** A published notification with ids of its own for this delivery (events are remembered by id). */
function notification(file: string, data: Record<string, unknown>) {
  const n = published('paddle', file);
  return JSON.stringify({ ...n, event_id: fresh('evt'), notification_id: fresh('ntf'), data });
}

describePublished("Paddle Billing, on paddle-node-sdk's published notifications", () => {
  let m: Merchant;
  const send = (body: string) => paddleSigned(m.id, SECRET, body);
  beforeEach(async () => {
    m = await merchantWithSecret('paddle', SECRET);
  });

  it('walks first payment -> renewal -> partial refund -> full refund -> cancellation', async () => {
    // paddle/subscription.canceled.json names the subscription and customer the walk is about.
    const canceled = published('paddle', 'subscription.canceled.json').data;
    const customer: string = canceled.customer_id;

    // paddle/transaction.completed.json: 599.00 USD + 53.15 tax. Tied to that subscription and
    // customer, with the referral in custom_data (published null).
    const first = published('paddle', 'transaction.completed.json').data;
    Object.assign(first, {
      customer_id: customer,
      subscription_id: canceled.id,
      custom_data: { ref_svc_affiliate: m.slug },
    });
    await expectOutcome(send(notification('transaction.completed.json', first)), 'processed');
    expect(await conversionOf(m, first.id)).toMatchObject({
      amount: 599,
      currency: 'USD',
      kind: 'initial',
      commission_amount: 179.7,
      customer_id: customer,
      status: 'approved',
    });
    expect(await customerOf(m, customer)).toMatchObject({ status: 'active', affiliate_id: m.affiliate.id });

    // The same transaction as the renewal a month later: an id of its own, no custom data.
    const renewal = published('paddle', 'transaction.completed.json').data;
    Object.assign(renewal, {
      id: fresh('txn'),
      origin: 'subscription_recurring',
      customer_id: customer,
      subscription_id: canceled.id,
      billed_at: '2023-09-22T07:15:44.296865Z',
      created_at: '2023-09-22T07:15:40.000000Z',
      updated_at: '2023-09-22T07:15:44.296867Z',
    });
    await expectOutcome(send(notification('transaction.completed.json', renewal)), 'processed');
    expect(await conversionOf(m, renewal.id)).toMatchObject({
      amount: 599,
      kind: 'recurring',
      commission_amount: 179.7,
      occurred_at: '2023-09-22T07:15:44.296Z',
    });

    // paddle/adjustment.created.json (pending approval) then adjustment.updated.json (approved):
    // a partial refund of 1.00, 0.92 of it before tax, of the renewal (its transaction id set here).
    const pending = published('paddle', 'adjustment.created.json').data;
    Object.assign(pending, { transaction_id: renewal.id, customer_id: customer, subscription_id: canceled.id });
    await expectOutcome(send(notification('adjustment.created.json', pending)), 'ignored');
    const approved = published('paddle', 'adjustment.updated.json').data;
    Object.assign(approved, { transaction_id: renewal.id, customer_id: customer, subscription_id: canceled.id });
    await expectOutcome(send(notification('adjustment.updated.json', approved)), 'processed');
    // 179.70 x (599 - 0.92) / 599 = 179.424 -> 179.42
    expect(await conversionOf(m, renewal.id)).toMatchObject({
      status: 'approved',
      refunded_amount: 0.92,
      commission_amount: 179.42,
    });

    // A full refund of the renewal (Paddle publishes none: type "full" and the transaction's
    // totals set on adjustment.updated.json, under an adjustment id of its own).
    const full = published('paddle', 'adjustment.updated.json').data;
    const totals = { ...full.totals, subtotal: '59900', tax: '5315', total: '65215' };
    Object.assign(full, {
      id: fresh('adj'),
      type: 'full',
      transaction_id: renewal.id,
      customer_id: customer,
      subscription_id: canceled.id,
      totals,
      items: full.items.map((i: any) => ({
        ...i,
        type: 'full',
        amount: '65215',
        totals: { subtotal: '59900', tax: '5315', total: '65215' },
      })),
    });
    await expectOutcome(send(notification('adjustment.updated.json', full)), 'processed');
    expect(await conversionOf(m, renewal.id)).toMatchObject({
      status: 'reversed',
      refunded_amount: 599,
      commission_amount: 0,
    });

    // paddle/subscription.canceled.json as published.
    await expectOutcome(send(notification('subscription.canceled.json', canceled)), 'processed');
    expect(await customerOf(m, customer)).toMatchObject({ status: 'canceled', affiliate_id: m.affiliate.id });
    expect(await conversionOf(m, first.id)).toMatchObject({
      amount: 599,
      commission_amount: 179.7,
      refunded_amount: 0,
      status: 'approved',
    });
  });

  it('a time Paddle has not set yet ("0001-01-01T00:00:00Z") is no time: the charge takes the next one', async () => {
    // adjustment.created.json shows Paddle's zero time in updated_at; on a transaction without
    // billed_at it must not date the sale in year 1.
    const zero = published('paddle', 'adjustment.created.json').data.updated_at;
    expect(zero).toBe('0001-01-01T00:00:00Z');
    const t = published('paddle', 'transaction.completed.json').data;
    Object.assign(t, { billed_at: null, updated_at: zero, custom_data: { ref_svc_affiliate: m.slug } });
    await expectOutcome(send(notification('transaction.completed.json', t)), 'processed');
    expect((await conversionOf(m, t.id)).occurred_at).toBe(new Date(t.created_at).toISOString());
  });
});
