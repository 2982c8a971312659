import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { admin, api, type Api } from '../support/api.js';
import { testServer } from '../support/server.js';
import { nowSeconds } from './helpers.js';
import {
  chargebeeSigned,
  lemonSqueezySigned,
  paddleSigned,
  polarSigned,
  stripeSigned,
  type Signed,
} from './signers.js';
import { sql } from 'kysely';

/**
 * Test mode with a payment provider (spec/test-mode.md, "Payment providers"; server/src/webhooks/mode.ts):
 * the webhook URL carries the live organization's id; an event lands in the live data or in the
 * test organization's by the event's own flag (Stripe `livemode`, Lemon Squeezy `meta.test_mode`)
 * and otherwise by the secret that verified it (Paddle and Polar sandboxes, Chargebee test sites).
 * What landed is read back through the API: with the key of its mode it is there, with the other
 * key it is 404. Through PgBouncer too (the suite's shared server).
 */
const LIVE_SECRET = 'live_secret_3b9d6f1a8c2e4b7d9f0a1c3e5b7d9f1a';
const TEST_SECRET = 'test_secret_8e2c4a6b0d1f3e5a7c9b1d3f5a7c9e1b';

type Provider = 'stripe' | 'paddle' | 'lemonsqueezy' | 'polar' | 'chargebee';
type Flag = 'live' | 'test' | undefined;

const uid = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 20)}`;

/** A merchant: its live organization and its test twin, each with a program and an affiliate of the same slug. */
async function twins() {
  const created = await admin().post('/admin/organizations', { name: uid('Twins') });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const live = api(created.body.data.api_key);
  const test = api(created.body.data.test_api_key);
  const slug = uid('aff').toLowerCase().replaceAll('_', '-');
  for (const key of [live, test]) {
    const program = await key.post('/api/programs', { name: 'Main', commission_value: 30 });
    expect(program.status, JSON.stringify(program.body)).toBe(201);
    const affiliate = await key.post('/api/affiliates', {
      email: `${slug}@example.com`,
      program_id: program.body.data.program.id,
      slug,
    });
    expect(affiliate.status, JSON.stringify(affiliate.body)).toBe(201);
  }
  const liveId: string = created.body.data.organization.id;
  return { liveId, live, test, slug };
}
type Twins = Awaited<ReturnType<typeof twins>>;

/** Stores a signing secret with this key's mode; the path to register is the live organization's in both modes. */
async function integrate(key: Api, provider: Provider, secret: string, liveId?: string) {
  const res = await key.put(`/api/integrations/${provider}`, { signing_secret: secret });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  if (liveId) expect(res.body.data.integration.webhook_path).toBe(`/webhooks/${provider}/${liveId}`);
}

/** A paid charge of 50.00 USD referred by `ref`, as each provider sends it, with the provider's own test flag where it has one. */
interface Charge {
  body: string;
  /** The conversion's external_id the service records. */
  externalId: string;
  /** Lemon Squeezy's event name header; Polar's message id (its event id). */
  eventName?: string;
  msgId?: string;
}

const CHARGES: Record<Provider, (ref: string, flag: Flag, id?: string) => Charge> = {
  stripe: (ref, flag, id = uid('in')) => ({
    externalId: id,
    body: JSON.stringify({
      id: `evt_${id}`,
      object: 'event',
      type: 'invoice.paid',
      created: nowSeconds(),
      ...(flag ? { livemode: flag === 'live' } : {}),
      data: {
        object: {
          id,
          object: 'invoice',
          status: 'paid',
          currency: 'usd',
          amount_paid: 5000,
          total: 5000,
          total_excluding_tax: 5000,
          customer: `cus_${id}`,
          billing_reason: 'subscription_create',
          parent: {
            type: 'subscription_details',
            subscription_details: { metadata: { ref_svc_affiliate: ref }, subscription: `sub_${id}` },
          },
          status_transitions: { paid_at: nowSeconds() - 5 },
          created: nowSeconds() - 5,
        },
      },
    }),
  }),
  paddle: (ref, _flag, id = uid('txn')) => ({
    externalId: id,
    body: JSON.stringify({
      event_id: `evt_${id}`,
      notification_id: `ntf_${id}`,
      event_type: 'transaction.completed',
      occurred_at: new Date().toISOString(),
      data: {
        id,
        status: 'completed',
        currency_code: 'USD',
        customer_id: `ctm_${id}`,
        custom_data: { ref_svc_affiliate: ref },
        details: { totals: { total: '5000', tax: '0', grand_total: '5000' } },
        billed_at: new Date().toISOString(),
      },
    }),
  }),
  lemonsqueezy: (ref, flag, id = String(Math.floor(Math.random() * 1e9))) => ({
    externalId: `lemonsqueezy:order:${id}`,
    eventName: 'order_created',
    body: JSON.stringify({
      meta: {
        event_name: 'order_created',
        ...(flag ? { test_mode: flag === 'test' } : {}),
        custom_data: { ref_svc_affiliate: ref },
      },
      data: {
        type: 'orders',
        id,
        attributes: {
          status: 'paid',
          currency: 'USD',
          total: 5000,
          tax: 0,
          customer_id: Number(id),
          created_at: new Date().toISOString(),
        },
      },
    }),
  }),
  polar: (ref, _flag, id = randomUUID()) => ({
    externalId: id,
    msgId: `msg_${id}`,
    body: JSON.stringify({
      type: 'order.paid',
      data: {
        id,
        status: 'paid',
        currency: 'usd',
        net_amount: 5000,
        customer_id: randomUUID(),
        metadata: { ref_svc_affiliate: ref },
        created_at: new Date().toISOString(),
      },
    }),
  }),
  chargebee: (ref, _flag, id = uid('inv')) => ({
    externalId: id,
    body: JSON.stringify({
      id: `ev_${id}`,
      event_type: 'payment_succeeded',
      object: 'event',
      api_version: 'v2',
      occurred_at: nowSeconds(),
      content: {
        invoice: { id, currency_code: 'USD', amount_paid: 5000, total: 5000, tax: 0, customer_id: `cust_${id}` },
        customer: { id: `cust_${id}`, cf_ref_svc_affiliate: ref },
      },
    }),
  }),
};

function signed(provider: Provider, orgId: string, secret: string, charge: Charge): Signed {
  switch (provider) {
    case 'stripe':
      return stripeSigned(orgId, secret, charge.body);
    case 'paddle':
      return paddleSigned(orgId, secret, charge.body);
    case 'lemonsqueezy':
      return lemonSqueezySigned(orgId, secret, charge.body, charge.eventName!);
    case 'polar':
      return polarSigned(orgId, secret, charge.body, new Date(), charge.msgId);
    case 'chargebee':
      return chargebeeSigned(orgId, secret, charge.body);
  }
}

async function expectOutcome(delivery: Signed, outcome: 'processed' | 'duplicate') {
  const res = await delivery.send();
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data.webhook.outcome, res.body.data.webhook.detail).toBe(outcome);
}

/**
 * The charge is in `into`'s data (commission 30 % of 50.00), with its customer, and absent from
 * `notInto`'s: not in its lists, and not readable by id with the other key (the spec's 404 there is
 * the isolation rule's, db/owned-row.ts; any answer but the row keeps this test's point).
 */
async function expectLanded(charge: Charge, into: Api, notInto: Api) {
  const path = `/api/conversions/${encodeURIComponent(charge.externalId)}`;
  const found = await into.get(path);
  expect(found.status, JSON.stringify(found.body)).toBe(200);
  expect(found.body.data.conversion).toMatchObject({
    external_id: charge.externalId,
    amount: 50,
    currency: 'USD',
    commission_amount: 15,
  });
  const other = await notInto.get(path);
  expect(other.status, JSON.stringify(other.body)).not.toBe(200);
  expect(other.body.success).toBe(false);
  const listed = (key: Api) =>
    key
      .get('/api/conversions?limit=100')
      .then((res) => res.body.data.conversions.map((c: { external_id: string }) => c.external_id));
  expect(await listed(into)).toContain(charge.externalId);
  expect(await listed(notInto)).not.toContain(charge.externalId);
  const commissions = (await notInto.get('/api/commissions?limit=100')).body.data.commissions as {
    conversion_id: string;
  }[];
  expect(commissions.map((c) => c.conversion_id)).not.toContain(found.body.data.conversion.id);
}

/** The provider's events in an organization's received-webhooks log (GET /api/integrations/events). */
async function logged(key: Api, provider: Provider) {
  const res = await key.get(`/api/integrations/events?provider=${provider}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.webhook_events as { event_id: string; outcome: string; reason?: string }[];
}

const PROVIDERS: { provider: Provider; flagged: boolean }[] = [
  { provider: 'stripe', flagged: true },
  { provider: 'paddle', flagged: false },
  { provider: 'lemonsqueezy', flagged: true },
  { provider: 'polar', flagged: false },
  { provider: 'chargebee', flagged: false },
];

describe.each(PROVIDERS)('test mode with $provider', ({ provider, flagged }) => {
  const charge = (m: Twins, flag: Flag) => CHARGES[provider](m.slug, flagged ? flag : undefined);

  async function merchant(): Promise<Twins> {
    const m = await twins();
    await integrate(m.live, provider, LIVE_SECRET, m.liveId);
    await integrate(m.test, provider, TEST_SECRET, m.liveId);
    return m;
  }

  it('a live event lands in the live data; a test event in the test data; each invisible to the other key', async () => {
    const m = await merchant();
    const live = charge(m, 'live');
    await expectOutcome(signed(provider, m.liveId, LIVE_SECRET, live), 'processed');
    await expectLanded(live, m.live, m.test);

    const test = charge(m, 'test');
    await expectOutcome(signed(provider, m.liveId, TEST_SECRET, test), 'processed');
    await expectLanded(test, m.test, m.live);

    // Each event is in the log of the organization it landed in, and only there.
    const liveLog = await logged(m.live, provider);
    const testLog = await logged(m.test, provider);
    expect(liveLog).toHaveLength(1);
    expect(testLog).toHaveLength(1);
    expect(liveLog[0].event_id).not.toBe(testLog[0].event_id);
  });

  it('replays are remembered per mode: the same event once in live and once in test, each redelivery a duplicate', async () => {
    const m = await merchant();
    const live = charge(m, 'live');
    await expectOutcome(signed(provider, m.liveId, LIVE_SECRET, live), 'processed');
    await expectOutcome(signed(provider, m.liveId, LIVE_SECRET, live), 'duplicate');
    // The same charge as a test event (same ids; for flagged providers the flag says test).
    const test = flagged
      ? CHARGES[provider](
          m.slug,
          'test',
          provider === 'lemonsqueezy' ? live.externalId.split(':').at(-1) : live.externalId,
        )
      : live;
    await expectOutcome(signed(provider, m.liveId, TEST_SECRET, test), 'processed');
    await expectOutcome(signed(provider, m.liveId, TEST_SECRET, test), 'duplicate');
    expect((await m.live.get('/api/conversions?limit=100')).body.data.conversions).toHaveLength(1);
    expect((await m.test.get('/api/conversions?limit=100')).body.data.conversions).toHaveLength(1);
  });

  it('the URL may carry the test organization id: then everything is test', async () => {
    const m = await merchant();
    // The API shows the account's (live) id in both modes; the twin's own id is the database's.
    const { db } = await testServer();
    const [twin] = await Db.of(db.orm).rows(
      sql<{ id: string }>`select id from organizations where live_organization_id = ${m.liveId}`,
    );
    const testId = twin.id;
    const test = charge(m, 'test');
    await expectOutcome(signed(provider, testId, TEST_SECRET, test), 'processed');
    await expectLanded(test, m.test, m.live);
    // A live-flagged event (or, unflagged, one signed with the test secret) at the twin's URL is test as well.
    const other = charge(m, 'live');
    await expectOutcome(signed(provider, testId, TEST_SECRET, other), 'processed');
    await expectLanded(other, m.test, m.live);
  });

  it('a wrong signature is refused and counted in the live organization log; nothing lands anywhere', async () => {
    const m = await merchant();
    const res = await signed(provider, m.liveId, 'neither_secret_0a1b2c3d4e5f6a7b8c9d', charge(m, 'live')).send();
    expect(res.status).toBe(400);
    expect((await m.live.get('/api/conversions')).body.data.conversions).toEqual([]);
    expect((await m.test.get('/api/conversions')).body.data.conversions).toEqual([]);
    expect(
      (await m.live.get(`/api/integrations/events?provider=${provider}&outcome=rejected`)).body.data.webhook_events,
    ).toHaveLength(1);
  });

  if (flagged) {
    it('a test event signed with the LIVE secret still lands in the test data, even where the test organization has no integration', async () => {
      const m = await twins();
      await integrate(m.live, provider, LIVE_SECRET);
      const test = charge(m, 'test');
      await expectOutcome(signed(provider, m.liveId, LIVE_SECRET, test), 'processed');
      await expectLanded(test, m.test, m.live);
      expect(await logged(m.live, provider)).toEqual([]);
      expect(await logged(m.test, provider)).toHaveLength(1);
    });

    it('a live-flagged event that only the TEST secret verifies lands in the test data (a test secret never writes live figures)', async () => {
      const m = await merchant();
      const live = charge(m, 'live');
      await expectOutcome(signed(provider, m.liveId, TEST_SECRET, live), 'processed');
      await expectLanded(live, m.test, m.live);
    });
  } else {
    it('no flag: the secret decides; the same secret stored in both modes cannot tell them apart, so the event is test', async () => {
      const m = await twins();
      await integrate(m.live, provider, LIVE_SECRET);
      await integrate(m.test, provider, LIVE_SECRET);
      const either = charge(m, undefined);
      await expectOutcome(signed(provider, m.liveId, LIVE_SECRET, either), 'processed');
      await expectLanded(either, m.test, m.live);
    });

    it('a sandbox event with only a live integration is refused (its secret verifies nothing), and live events still land live', async () => {
      const m = await twins();
      await integrate(m.live, provider, LIVE_SECRET);
      const sandbox = await signed(provider, m.liveId, TEST_SECRET, charge(m, undefined)).send();
      expect(sandbox.status).toBe(400);
      const live = charge(m, undefined);
      await expectOutcome(signed(provider, m.liveId, LIVE_SECRET, live), 'processed');
      await expectLanded(live, m.live, m.test);
    });
  }
});
