import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { createOrganization, expectError, request } from '../support/api.js';
import { deliver, merchantWithSecret, nowSeconds } from './helpers.js';
import { paddleSigned } from './signers.js';

/**
 * GET /api/integrations/events: the provider webhooks an organization's URLs received, with their
 * outcome: processed, ignored (and why), rejected before verification (and why), newest first.
 */
const SECRET = 'whsec_log_5f1c0e1e0f6d4c1a9b2e7d3c8a4b6e2f';

let seq = 0;
const uid = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(++seq).toString(36)}`;

function stripeEvent(type: string, object: Record<string, unknown>, id = uid('evt')) {
  return JSON.stringify({
    id,
    object: 'event',
    api_version: '2025-03-31.basil',
    created: nowSeconds(),
    data: { object },
    livemode: true,
    pending_webhooks: 1,
    request: { id: null },
    type,
  });
}
const signedStripe = (orgId: string, body: string, secret = SECRET) =>
  deliver('stripe', orgId, body, {
    'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret }),
  });

function paidInvoice(ref: string) {
  return {
    id: uid('in'),
    object: 'invoice',
    status: 'paid',
    currency: 'usd',
    amount_due: 5000,
    amount_paid: 5000,
    amount_remaining: 0,
    total: 5000,
    total_taxes: [],
    metadata: {},
    customer: uid('cus'),
    customer_email: 'buyer@example.com',
    billing_reason: 'subscription_create',
    parent: {
      type: 'subscription_details',
      quote_details: null,
      subscription_details: { metadata: { ref_svc_affiliate: ref }, subscription: uid('sub') },
    },
    status_transitions: { finalized_at: nowSeconds() - 10, paid_at: nowSeconds() - 5 },
    created: nowSeconds() - 5,
  };
}

describe('GET /api/integrations/events', () => {
  it('lists processed, ignored and rejected webhooks newest first; rejections are counted per reason, nothing of their body kept', async () => {
    const m = await merchantWithSecret('stripe', SECRET);
    const paid = stripeEvent('invoice.paid', paidInvoice(m.slug));
    expect((await signedStripe(m.id, paid)).body.data.webhook.outcome).toBe('processed');
    const ignoredBody = stripeEvent('customer.created', { id: uid('cus'), object: 'customer' });
    expect((await signedStripe(m.id, ignoredBody)).body.data.webhook.outcome).toBe('ignored');
    // Signed with another secret, twice: 400, counted under one reason. The body's secret-looking text is never stored.
    const forged = stripeEvent(
      'invoice.paid',
      { ...paidInvoice(m.slug), description: 'FORGED-BODY-MARKER' },
      'evt_forged_1',
    );
    for (let i = 0; i < 2; i++)
      expectError(
        await signedStripe(m.id, forged, 'whsec_wrong_secret_0000000000000000'),
        400,
        /Invalid Stripe-Signature/,
      );
    // No Paddle secret stored: 400, counted as well.
    expectError(
      await paddleSigned(m.id, 'pdl_ntfset_whatever', '{"event_id":"evt_p"}').send(),
      400,
      /No paddle signing secret/,
    );
    // A redelivery is a duplicate, not listed again.
    expect((await signedStripe(m.id, paid)).body.data.webhook.outcome).toBe('duplicate');

    const res = await m.api.get('/api/integrations/events');
    expect(res.status).toBe(200);
    const events = res.body.data.webhook_events;
    expect(res.body.data.next_cursor).toBeNull();
    expect(events.map((e: any) => [e.provider, e.outcome, e.requests])).toEqual([
      ['paddle', 'rejected', 1],
      ['stripe', 'rejected', 2],
      ['stripe', 'ignored', 1],
      ['stripe', 'processed', 1],
    ]);
    const [paddle, stripeRejected, ignored, processed] = events;
    expect(paddle).toMatchObject({
      event_id: null,
      event_type: null,
      detail: expect.stringMatching(/^No paddle signing secret is configured/),
    });
    expect(stripeRejected).toMatchObject({
      event_id: null,
      event_type: null,
      detail: expect.stringMatching(/^Invalid Stripe-Signature: /),
    });
    expect(Date.parse(stripeRejected.first_received_at)).toBeLessThanOrEqual(Date.parse(stripeRejected.received_at));
    expect(ignored).toMatchObject({
      event_type: 'customer.created',
      event_id: JSON.parse(ignoredBody).id,
      detail: expect.any(String),
    });
    expect(processed).toMatchObject({
      event_type: 'invoice.paid',
      event_id: JSON.parse(paid).id,
      detail: expect.stringMatching(/^Conversion .* recorded/),
    });
    expect(processed.first_received_at).toBe(processed.received_at);
    expect(JSON.stringify(res.body)).not.toMatch(/FORGED-BODY-MARKER|evt_forged_1/);

    // Filters.
    const rejected = await m.api.get('/api/integrations/events?outcome=rejected&provider=stripe');
    expect(rejected.body.data.webhook_events.map((e: any) => e.detail)).toEqual([stripeRejected.detail]);
    const processedOnly = await m.api.get('/api/integrations/events?outcome=processed');
    expect(processedOnly.body.data.webhook_events.map((e: any) => e.event_id)).toEqual([processed.event_id]);
    const paddleOnly = await m.api.get('/api/integrations/events?provider=paddle');
    expect(paddleOnly.body.data.webhook_events).toEqual([paddle]);

    // Pages of one: the same entries, each once, in the same order.
    const walked: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await m.api.get(`/api/integrations/events?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      walked.push(...page.body.data.webhook_events);
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(walked).toEqual(events);
  });

  it('another organization sees none of it; an unknown organization in the URL records nothing', async () => {
    const m = await merchantWithSecret('stripe', SECRET);
    expectError(
      await signedStripe(m.id, stripeEvent('invoice.paid', paidInvoice(m.slug)), 'whsec_wrong_secret_0000000000000000'),
      400,
    );
    const other = await createOrganization();
    expect((await other.api.get('/api/integrations/events')).body.data).toEqual({
      webhook_events: [],
      next_cursor: null,
    });
    // Random and malformed organization ids: still 400, and no row (no organization to count it for).
    expectError(
      await signedStripe('8d5e0a52-6a3f-4a43-9b0e-000000000000', stripeEvent('invoice.paid', paidInvoice('x'))),
      400,
      /No stripe signing secret/,
    );
    expectError(
      await signedStripe('not-a-uuid', stripeEvent('invoice.paid', paidInvoice('x'))),
      400,
      /No stripe signing secret/,
    );
    expect((await m.api.get('/api/integrations/events')).body.data.webhook_events).toHaveLength(1);
  });

  it('400 for a bad filter or cursor, 401 without a key', async () => {
    const org = await createOrganization();
    expectError(await org.api.get('/api/integrations/events?outcome=duplicate'), 400, /^outcome: /);
    expectError(await org.api.get('/api/integrations/events?provider=paypal'), 400, /^provider: /);
    expectError(await org.api.get('/api/integrations/events?cursor=bm9wZQ'), 400, /^cursor: Invalid cursor/);
    expectError(await request('GET', '/api/integrations/events'), 401);
  });
});
