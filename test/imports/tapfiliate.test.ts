import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextPage, TapfiliateReader } from '../../server/src/modules/imports/sources/tapfiliate.js';
import { expectError } from '../support/api.js';
import { merchant, runImport } from './import-helpers.js';
import type { Standin } from './rewardful-standin.js';
import { startTapfiliateStandin } from './tapfiliate-standin.js';

/**
 * Imports from Tapfiliate's REST API 1.6 (https://tapfiliate.com/docs/rest/) against a local
 * stand-in that speaks it (tapfiliate-standin.ts: `X-Api-Key`, `page` pagination with a
 * `Link: <…>; rel="next"` header, 401 on a wrong key, 429 with Retry-After).
 */
const KEY = 'tap-key-0123';
const A1 = 'ada-ex';
const A2 = 'bob-ex';

const affiliate = (id: string, email: string, first: string, extra: object = {}) => ({
  id,
  firstname: first,
  lastname: 'Example',
  email,
  created_at: '2024-01-02T10:00:00+00:00',
  group: null,
  meta_data: {},
  parent: null,
  coupon: null,
  referral_link: `https://example.com/?ref=${id}`,
  ...extra,
});
const conversion = (
  id: number,
  amount: number,
  currency: string,
  affiliateId: string,
  customer: string,
  commissions: object[],
  extra: object = {},
) => ({
  id,
  external_id: `order-${id}`,
  amount,
  currency,
  created_at: '2024-03-01T12:00:00+00:00',
  click: null,
  program: { id: 'main', currency },
  affiliate: { id: affiliateId, firstname: 'X', lastname: 'Y' },
  customer: { id: `c-${customer}`, customer_id: customer },
  meta_data: {},
  commissions,
  ...extra,
});
const commission = (id: number, amount: number, currency: string, approved: boolean | null) => ({
  id,
  amount,
  currency,
  approved,
  final: approved !== null,
  conversion_sub_amount: amount * 5,
  created_at: '2024-03-01T12:00:00+00:00',
  commission_type: 'standard',
});

const DATA = {
  affiliates: [
    affiliate(A1, 'ada@example.com', 'Ada', {
      referral_links: [{ link: 'https://example.com/pricing?ref=ada-promo' }],
    }),
    affiliate(A2, 'bob@example.com', 'Bob', { approved: false }),
    affiliate('nope', 'not-an-email', 'Nope'),
  ],
  customers: [
    {
      id: 'c-cus_1',
      customer_id: 'cus_1',
      status: 'paying',
      created_at: '2024-02-01T00:00:00+00:00',
      affiliate: { id: A1 },
      program: { id: 'main' },
    },
    {
      id: 'c-cus_2',
      customer_id: 'cus_2',
      status: 'trial',
      created_at: '2024-02-01T00:00:00+00:00',
      affiliate: { id: A2 },
      program: { id: 'main' },
    },
    {
      id: 'c-none',
      customer_id: null,
      status: 'new',
      created_at: '2024-02-01T00:00:00+00:00',
      affiliate: { id: A1 },
      program: { id: 'main' },
    },
  ],
  payments: [
    {
      id: 'pay-1',
      affiliate: { id: A1 },
      amount: 25,
      currency: 'USD',
      created_at: '2024-04-05T00:00:00+00:00',
      commissions: [{ id: 102 }],
    },
    {
      id: 'pay-2',
      affiliate: { id: A2 },
      amount: 10,
      currency: 'USD',
      created_at: '2024-04-05T00:00:00+00:00',
      commissions: [],
    },
  ],
  conversions: [
    conversion(1, 61.7, 'EUR', A1, 'cus_1', [commission(101, 12.34, 'EUR', null)]),
    conversion(2, 125, 'USD', A1, 'cus_1', [commission(102, 25, 'USD', true)]),
    conversion(3, 50, 'USD', A2, 'cus_2', [commission(103, 10, 'USD', true)]),
    conversion(4, 35, 'GBP', A2, 'cus_2', [commission(104, 7, 'GBP', false)]),
    conversion(5, 20, 'USD', A1, 'cus_1', []),
    conversion(6, 20, 'USD', A1, 'cus_1', [commission(106, 1.005, 'USD', true)]),
  ],
};

let standin: Standin;
beforeAll(async () => {
  standin = await startTapfiliateStandin(KEY, DATA);
  process.env.IMPORT_TAPFILIATE_API_BASE_URL = standin.url;
});
afterAll(async () => {
  delete process.env.IMPORT_TAPFILIATE_API_BASE_URL;
  await standin.close();
});

const EXPECTED = {
  affiliates: { created: 2, already_present: 0, skipped: 1 },
  customers: { created: 2, already_present: 0, skipped: 1 },
  payouts: { created: 1, already_present: 0, skipped: 1 },
  conversions: { created: 4, already_present: 0, skipped: 0 },
  commissions: { created: 4, already_present: 0, skipped: 2 },
};

describe('Tapfiliate import', () => {
  it('reads the next page from the Link header (RFC 8288), whatever the order of its relations', () => {
    expect(
      nextPage(
        '<https://api.tapfiliate.com/1.6/conversions/?page=3>; rel="next", <https://api.tapfiliate.com/1.6/conversions/?page=1>; rel="prev"',
        2,
      ),
    ).toBe(3);
    expect(nextPage('<https://api.tapfiliate.com/1.6/conversions/?page=1>; rel="prev"', 2)).toBeNull();
    expect(nextPage(null, 1)).toBeNull();
  });

  it('a dry run follows the Link header to the end, writes nothing and reports what it would do and skip', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, 'tapfiliate', { api_key: KEY }, true);
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts).toEqual(EXPECTED);
    expect(done.skipped).toEqual(
      expect.arrayContaining([
        { kind: 'affiliates', source_id: 'nope', reason: expect.stringContaining('e-mail') },
        { kind: 'customers', source_id: 'c-none', reason: expect.stringContaining('no customer_id') },
        { kind: 'payouts', source_id: 'pay-2', reason: expect.stringContaining('no commissions listed') },
        { kind: 'commissions', source_id: '5', reason: expect.stringContaining('no commissions') },
        {
          kind: 'commissions',
          source_id: '6',
          reason: expect.stringContaining("finer than the currency's minor unit"),
        },
      ]),
    );
    expect(standin.requests.some((r) => r.path === '/1.6/conversions/?page=3' && r.status === 200)).toBe(true);
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
    expect((await m.api.get('/api/commissions')).body.data.commissions).toEqual([]);
  });

  it('imports affiliates with every referral code, customers, conversions, commissions and payments in their currency; waits out a 429; a rerun changes nothing', async () => {
    const m = await merchant();
    standin.rateLimitOnce.add('/1.6/conversions/');
    const done = await runImport(m.api, m.programId, 'tapfiliate', { api_key: KEY });
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts).toEqual(EXPECTED);
    expect(standin.requests.some((r) => r.path.startsWith('/1.6/conversions/') && r.status === 429)).toBe(true);

    const affiliates = (await m.api.get('/api/affiliates?limit=100')).body.data.affiliates;
    const ada = affiliates.find((a: any) => a.email === 'ada@example.com');
    expect(ada).toMatchObject({ name: 'Ada Example', status: 'active', slug: A1 });
    expect(affiliates.find((a: any) => a.email === 'bob@example.com')).toMatchObject({ status: 'disabled' });
    for (const ref of [A1, 'ada-promo']) {
      const click = await m.api.post('/api/clicks', { ref });
      expect(click.status, JSON.stringify(click.body)).toBe(201);
      expect(click.body.data.click.affiliate_id).toBe(ada.id);
    }

    const conversions = (await m.api.get('/api/conversions')).body.data.conversions;
    expect(conversions.find((c: any) => c.external_id === 'order-1')).toMatchObject({
      amount: 61.7,
      currency: 'EUR',
      occurred_at: '2024-03-01T12:00:00.000Z',
      customer_id: 'cus_1',
      affiliate_id: ada.id,
    });
    const commissions = (await m.api.get('/api/commissions?limit=100')).body.data.commissions;
    expect(Object.fromEntries(commissions.map((c: any) => [`${c.amount} ${c.currency}`, c.status]))).toEqual({
      '12.34 EUR': 'pending',
      '25 USD': 'paid',
      '10 USD': 'approved',
      '7 GBP': 'reversed',
    });
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

    const again = await runImport(m.api, m.programId, 'tapfiliate', { api_key: KEY });
    expect(again.status).toBe('succeeded');
    for (const kind of ['affiliates', 'customers', 'payouts', 'conversions', 'commissions'] as const)
      expect(again.counts[kind].created).toBe(0);
    expect(again.counts.commissions.already_present).toBe(4);
    expect((await m.api.get('/api/commissions?limit=100')).body.data.commissions).toHaveLength(4);
  });

  it('a wrong API key fails the import with a message that says so, and writes nothing', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, 'tapfiliate', { api_key: 'wrong' });
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(
      /Tapfiliate refused the credentials \(HTTP 401\): check the API key\. Nothing was imported/,
    );
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
    expectError(
      await m.api.post('/api/imports', { source: 'tapfiliate', credentials: {}, program_id: m.programId }),
      400,
      'credentials.api_key: Required (Tapfiliate API key)',
    );
  });

  it('a page that answers 500 is tried again, not lost', async () => {
    const m = await merchant();
    standin.failures.set('/1.6/customers/?page=2', 1);
    const done = await runImport(m.api, m.programId, 'tapfiliate', { api_key: KEY });
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts.customers).toEqual(EXPECTED.customers);
    expect(standin.requests.some((r) => r.path === '/1.6/customers/?page=2' && r.status === 500)).toBe(true);
  });

  it('a resumed import that starts at the conversions reads the payments again to know which commissions were paid', async () => {
    const fresh = new TapfiliateReader({ api_key: KEY }, standin.url, { sleep: async () => undefined });
    const page = await fresh.readPage('commissions', 1);
    expect(page.batch.commissions!.map((c) => [c.source_id, c.status, c.payout_source_id])).toEqual([
      ['101', 'pending', null],
      ['102', 'paid', 'pay-1'],
    ]);
    expect(page.next).toBe(2);
  });
});
