import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchant, runImport as runImportOf } from './import-helpers.js';
import { Db } from '../../server/src/db/sql.js';
import { expectError, type Api } from '../support/api.js';
import { testServer } from '../support/server.js';
import { startRewardfulStandin, type Standin } from './rewardful-standin.js';
import { sql } from 'kysely';

/**
 * Imports from Rewardful's REST API (https://developers.rewardful.com/rest-api/overview), against
 * a local stand-in that speaks it (rewardful-standin.ts: Basic auth with the API Secret as user
 * name, `page`/`limit` pagination with `pagination.next_page`, 401 on a wrong secret, and a 429
 * with Retry-After). The objects follow the documented examples:
 * https://developers.rewardful.com/rest-api/affiliates/object,
 * https://developers.rewardful.com/rest-api/commissions/object,
 * https://developers.rewardful.com/rest-api/payouts/the-payout-object.
 */
const SECRET = 'rw-secret-0123';
const A1 = 'aff-1111';
const A2 = 'aff-2222';

const affiliate = (id: string, email: string, first: string, tokens: string[], extra: object = {}) => ({
  id,
  created_at: '2024-01-02T10:00:00.000Z',
  updated_at: '2024-01-02T10:00:00.000Z',
  first_name: first,
  last_name: 'Example',
  email,
  paypal_email: `${first.toLowerCase()}-pay@example.com`,
  state: 'active',
  visitors: 10,
  leads: 2,
  conversions: 1,
  campaign: { id: 'camp-1', name: 'Main' },
  links: tokens.map((token, i) => ({
    id: `${id}-link-${i}`,
    url: `https://example.com/?via=${token}`,
    token,
    visitors: 5,
    leads: 1,
    conversions: 1,
  })),
  ...extra,
});

const sale = (id: string, cents: number, currency: string, charged: string, customer: string, affiliateId: string) => ({
  id: `sale-${id}`,
  currency,
  charged_at: charged,
  stripe_charge_id: `ch_${id}`,
  created_at: charged,
  updated_at: charged,
  charge_amount_cents: cents,
  refund_amount_cents: 0,
  tax_amount_cents: 0,
  sale_amount_cents: cents,
  referral: {
    id: `ref-${customer}`,
    stripe_customer_id: customer,
    conversion_state: 'conversion',
    customer: { platform: 'stripe', id: customer, name: 'Cus Tomer', email: `${customer}@example.com` },
    affiliate: { id: affiliateId },
  },
});

const commission = (
  id: string,
  state: string,
  cents: number,
  currency: string,
  affiliateId: string,
  customer: string,
  dueAt: string,
) => ({
  id,
  created_at: '2024-03-01T00:00:00.000Z',
  updated_at: '2024-03-01T00:00:00.000Z',
  amount: cents,
  currency,
  state,
  due_at: dueAt,
  paid_at: state === 'paid' ? '2024-04-05T00:00:00.000Z' : null,
  voided_at: state === 'voided' ? '2024-03-10T00:00:00.000Z' : null,
  campaign: { id: 'camp-1', name: 'Main' },
  sale: sale(id, cents * 5, currency, '2024-03-01T12:00:00.000Z', customer, affiliateId),
});

const DATA = {
  affiliates: [
    affiliate(A1, 'ada@example.com', 'Ada', ['ada', 'ada-promo']),
    affiliate(A2, 'bob@example.com', 'Bob', ['bob'], { state: 'disabled' }),
    affiliate('aff-bad', 'not-an-email', 'Nope', ['nope']),
  ],
  referrals: [
    {
      id: 'ref-1',
      affiliate: { id: A1 },
      customer: { platform: 'stripe', id: 'cus_1', name: 'One', email: 'one@example.com' },
      stripe_customer_id: 'cus_1',
      conversion_state: 'conversion',
    },
    {
      id: 'ref-2',
      affiliate: { id: A2 },
      customer: { platform: 'stripe', id: 'cus_2', name: 'Two', email: 'two@example.com' },
      stripe_customer_id: 'cus_2',
      conversion_state: 'lead',
    },
    { id: 'ref-3', affiliate: { id: A1 }, customer: null, stripe_customer_id: null, conversion_state: 'visitor' },
  ],
  payouts: [
    {
      id: 'pay-1',
      currency: 'USD',
      paid_at: '2024-04-05T00:00:00.000Z',
      state: 'paid',
      amount: 2500,
      affiliate: { id: A1 },
      commissions: [{ id: 'com-paid', currency: 'USD' }],
    },
    {
      id: 'pay-2',
      currency: 'USD',
      paid_at: null,
      state: 'due',
      amount: 1000,
      affiliate: { id: A2 },
      commissions: [{ id: 'com-due' }],
    },
  ],
  commissions: [
    commission('com-pending', 'pending', 1234, 'EUR', A1, 'cus_1', '2099-01-01T00:00:00.000Z'),
    commission('com-paid', 'paid', 2500, 'USD', A1, 'cus_1', '2024-03-31T00:00:00.000Z'),
    commission('com-due', 'due', 1000, 'USD', A2, 'cus_2', '2024-03-31T00:00:00.000Z'),
    commission('com-void', 'voided', 700, 'GBP', A2, 'cus_2', '2024-03-31T00:00:00.000Z'),
    { ...commission('com-nosale', 'due', 100, 'USD', A1, 'cus_1', '2024-03-31T00:00:00.000Z'), sale: null },
  ],
};

let standin: Standin;
beforeAll(async () => {
  standin = await startRewardfulStandin(SECRET, DATA);
  process.env.IMPORT_REWARDFUL_API_BASE_URL = standin.url;
});
afterAll(async () => {
  delete process.env.IMPORT_REWARDFUL_API_BASE_URL;
  await standin.close();
});

async function runImport(api: Api, programId: string, options: { dry_run?: boolean; secret?: string } = {}) {
  return runImportOf(api, programId, 'rewardful', { api_secret: options.secret ?? SECRET }, options.dry_run);
}

const EXPECTED = {
  affiliates: { created: 2, already_present: 0, skipped: 1 },
  customers: { created: 2, already_present: 0, skipped: 1 },
  payouts: { created: 1, already_present: 0, skipped: 1 },
  conversions: { created: 4, already_present: 0, skipped: 0 },
  commissions: { created: 4, already_present: 0, skipped: 1 },
};

describe('Rewardful import', () => {
  it('a dry run reads every page, writes nothing and reports what it would do and skip', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, { dry_run: true });
    expect(done.status, done.error).toBe('succeeded');
    expect(done.dry_run).toBe(true);
    expect(done.counts).toEqual(EXPECTED);
    expect(done.skipped).toEqual(
      expect.arrayContaining([
        { kind: 'affiliates', source_id: 'aff-bad', reason: expect.stringContaining('e-mail') },
        { kind: 'customers', source_id: 'ref-3', reason: expect.stringContaining('visit') },
        { kind: 'payouts', source_id: 'pay-2', reason: expect.stringContaining('not paid') },
        { kind: 'commissions', source_id: 'com-nosale', reason: expect.stringContaining('no sale') },
      ]),
    );
    // Two affiliates a page: pagination followed to the end of each list.
    expect(
      standin.requests
        .filter((r) => r.path.startsWith('/v1/affiliates'))
        .map((r) => new URL(r.path, 'http://x').searchParams.get('page')),
    ).toContain('2');
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
    expect((await m.api.get('/api/commissions')).body.data.commissions).toEqual([]);
  });

  it('imports partners, links, customers, conversions, commissions and paid payouts in their currency; a rerun changes nothing; undo removes it', async () => {
    const m = await merchant();
    // An endpoint subscribed to every event: any event the import wrote would be queued for it.
    const endpoint = await m.api.post('/api/webhook-endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['affiliate.created', 'customer.created', 'conversion.created', 'commission.created', 'payout.created'],
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    standin.rateLimitOnce.add('/v1/commissions');
    const done = await runImport(m.api, m.programId);
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts).toEqual(EXPECTED);
    // History, not new events: no webhook is queued for the imported rows.
    const db = Db.of((await testServer()).db.orm);
    const events = await db.one(
      sql<{
        n: number;
      }>`select (select count(*) from outbound_events where organization_id = ${m.id}) + (select count(*) from outbound_event_batches where organization_id = ${m.id}) as n`,
    );
    expect(Number(events!.n)).toBe(0);
    // While a partner created through the API is announced (the subscription works).
    expect((await m.api.post('/api/affiliates', { email: 'native@example.com', program_id: m.programId })).status).toBe(
      201,
    );
    const after = await db.one(
      sql<{ n: number }>`select count(*) as n from outbound_events where organization_id = ${m.id}`,
    );
    expect(Number(after!.n)).toBe(1);
    // The source's 429 was waited out, not a failure.
    expect(standin.requests.some((r) => r.path.startsWith('/v1/commissions') && r.status === 429)).toBe(true);

    const affiliates = (await m.api.get('/api/affiliates?limit=100')).body.data.affiliates;
    const ada = affiliates.find((a: any) => a.email === 'ada@example.com');
    expect(ada).toMatchObject({
      name: 'Ada Example',
      status: 'active',
      payout_email: 'ada-pay@example.com',
      slug: 'ada',
    });
    expect(affiliates.find((a: any) => a.email === 'bob@example.com')).toMatchObject({
      status: 'disabled',
      slug: 'bob',
    });

    const conversions = (await m.api.get('/api/conversions')).body.data.conversions;
    expect(conversions.find((c: any) => c.external_id === 'sale-com-pending')).toMatchObject({
      amount: 61.7,
      currency: 'EUR',
      occurred_at: '2024-03-01T12:00:00.000Z',
      customer_id: 'cus_1',
      affiliate_id: ada.id,
    });

    const commissions = (await m.api.get('/api/commissions?limit=100')).body.data.commissions;
    const byAmount = Object.fromEntries(commissions.map((c: any) => [`${c.amount} ${c.currency}`, c.status]));
    expect(byAmount).toEqual({ '12.34 EUR': 'pending', '25 USD': 'paid', '10 USD': 'approved', '7 GBP': 'reversed' });
    const payouts = (await m.api.get('/api/payouts')).body.data.payouts;
    expect(payouts).toHaveLength(1);
    expect(payouts[0]).toMatchObject({
      status: 'paid',
      amount: 25,
      currency: 'USD',
      affiliate_id: ada.id,
      commission_count: 1,
    });
    expect(commissions.find((c: any) => c.status === 'paid').payout_id).toBe(payouts[0].id);

    const again = await runImport(m.api, m.programId);
    expect(again.status).toBe('succeeded');
    for (const kind of ['affiliates', 'customers', 'payouts', 'conversions', 'commissions'] as const)
      expect(again.counts[kind].created).toBe(0);
    expect(again.counts.commissions.already_present).toBe(4);
    expect((await m.api.get('/api/commissions?limit=100')).body.data.commissions).toHaveLength(4);

    // Undo the rerun (it created nothing), then the import itself.
    expect((await m.api.delete(`/api/imports/${again.id}`)).status).toBe(200);
    const undone = await m.api.delete(`/api/imports/${done.id}`);
    expect(undone.status, JSON.stringify(undone.body)).toBe(200);
    expect((await m.api.get('/api/affiliates')).body.data.affiliates.map((a: any) => a.email)).toEqual([
      'native@example.com',
    ]);
    expect((await m.api.get('/api/conversions')).body.data.conversions).toEqual([]);
    expect((await m.api.get('/api/payouts')).body.data.payouts).toEqual([]);
    // The import stays listed, undone, with what it had done.
    expect((await m.api.get(`/api/imports/${done.id}`)).body.data.import).toMatchObject({
      status: 'undone',
      counts: EXPECTED,
    });
  });

  it('keeps every link token attributing to its partner, and refuses undo once something is built on the rows', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId);
    expect(done.status, done.error).toBe('succeeded');
    const ada = (await m.api.get('/api/affiliates')).body.data.affiliates.find(
      (a: any) => a.email === 'ada@example.com',
    );
    for (const ref of ['ada', 'ada-promo']) {
      const click = await m.api.post('/api/clicks', { ref });
      expect(click.status, JSON.stringify(click.body)).toBe(201);
      expect(click.body.data.click.affiliate_id).toBe(ada.id);
    }
    const conversion = await m.api.post('/api/conversions', {
      external_id: 'new-after-import',
      amount: 10,
      currency: 'USD',
      customer_id: 'cus_1',
    });
    expect(conversion.status, JSON.stringify(conversion.body)).toBe(201);
    expectError(
      await m.api.delete(`/api/imports/${done.id}`),
      409,
      /cannot be undone: .*conversions recorded since.*clicks/,
    );
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toHaveLength(2);
  });

  it('a wrong API secret fails the import with a message that says so, and writes nothing', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, { secret: 'wrong' });
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/Rewardful refused the credentials \(HTTP 401\)/);
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
  });

  it('names a missing credential with 400', async () => {
    const m = await merchant();
    expectError(
      await m.api.post('/api/imports', { source: 'rewardful', credentials: {}, program_id: m.programId }),
      400,
      'credentials.api_secret: Required (Rewardful API Secret)',
    );
  });
});
