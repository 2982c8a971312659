import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchant, runImport as runImportOf } from './import-helpers.js';
import { expectError, type Api } from '../support/api.js';
import { startFirstPromoterStandin, type FirstPromoterStandin } from './firstpromoter-standin.js';

/**
 * Imports from FirstPromoter's v2 admin API
 * (https://docs.firstpromoter.com/api-reference-v2/api-admin/introduction), against a local stand-in
 * (firstpromoter-standin.ts: `Authorization: Bearer` + `ACCOUNT-ID`, `page`/`per_page` pagination
 * with 2 rows a page, 401, 429 with Retry-After, 500 on demand). Commission fields follow
 * https://docs.firstpromoter.com/api-reference-v2/api-admin/commissions/create-a-commission and Dub's
 * importer schemas (amounts in cents); payouts the documented payout example
 * (https://docs.firstpromoter.com/api-reference-v1/payouts-api/create). Commissions are in the
 * account's currency (here `credentials.currency` USD), the sales in their original currency.
 */
const KEY = 'fp-key-0123';
const ACCOUNT = 'acc_42';
const P1 = 101;
const P2 = 102;

const promoter = (id: number, email: string, first: string, refs: string[], extra: object = {}) => ({
  id,
  email,
  name: `${first} Example`,
  status: 'active',
  default_ref_id: refs[0],
  paypal_email: `${first.toLowerCase()}-pay@example.com`,
  profile: { id: id * 10, first_name: first, last_name: 'Example' },
  promoter_campaigns: refs.map((ref, i) => ({
    id: id * 100 + i,
    campaign: { id: i + 1, name: `Campaign ${i + 1}` },
    ref_token: ref,
    state: 'accepted',
  })),
  ...extra,
});
const referral = (
  id: number,
  uid: string | null,
  promoterId: number,
  email: string | null = uid ? `${uid}@example.com` : null,
) => ({
  id,
  email,
  uid,
  first_name: 'Cus',
  last_name: 'Tomer',
  state: 'active',
  created_at: '2025-02-01T00:00:00.000Z',
  promoter_campaign: { id: promoterId * 100, promoter: { id: promoterId, email: 'x@example.com' } },
});
const commission = (
  id: number,
  status: string,
  cents: number,
  currency: string,
  promoterId: number,
  uid: string,
  extra: object = {},
) => ({
  id,
  status,
  is_paid: false,
  commission_type: 'sale',
  unit: 'cash',
  amount: cents,
  sale_amount: cents * 5,
  original_sale_amount: cents * 5,
  original_sale_currency: currency,
  created_at: '2025-03-01T12:00:00.000Z',
  updated_at: '2025-03-02T00:00:00.000Z',
  event_id: `evt_${id}`,
  is_self_referral: false,
  is_split: false,
  metadata: null,
  external_note: null,
  fraud_check: 'no_suspicion',
  referral: { id: id + 1000, email: `${uid}@example.com`, uid },
  promoter_campaign: { id: promoterId * 100, promoter: { id: promoterId } },
  ...extra,
});

const DATA = {
  promoters: [
    promoter(P1, 'ada@example.com', 'Ada', ['ada', 'ada-promo']),
    promoter(P2, 'bob@example.com', 'Bob', ['bob'], { status: 'blocked' }),
    promoter(103, '', 'Nope', ['nope']),
  ],
  referrals: [referral(1, 'cus_1', P1), referral(2, 'cus_2', P2), referral(3, null, P1)],
  payouts: [
    // As the documented payout example: no currency field, `date_paid`, amount in cents.
    {
      id: 501,
      status: 'completed',
      amount: 2500,
      unit: 'cash',
      date_paid: '2025-04-05T00:00:00.000Z',
      due_date: '2025-04-01T00:00:00.000Z',
      promoter: { id: P1, email: 'ada@example.com' },
      commissions: [{ id: 12 }],
    },
    {
      id: 502,
      status: 'pending',
      amount: 1000,
      unit: 'cash',
      date_paid: null,
      promoter: { id: P2, email: 'bob@example.com' },
    },
  ],
  commissions: [
    commission(11, 'pending', 1234, 'EUR', P1, 'cus_1'),
    commission(12, 'approved', 2500, 'USD', P1, 'cus_1', { is_paid: true }),
    commission(13, 'approved', 1000, 'USD', P2, 'cus_2'),
    commission(14, 'denied', 700, 'GBP', P2, 'cus_2'),
    commission(15, 'approved', 3, 'USD', P1, 'cus_1', { unit: 'free_months' }),
  ],
};

let standin: FirstPromoterStandin;
beforeAll(async () => {
  standin = await startFirstPromoterStandin(KEY, ACCOUNT, DATA);
  process.env.IMPORT_FIRSTPROMOTER_API_BASE_URL = standin.url;
});
afterAll(async () => {
  delete process.env.IMPORT_FIRSTPROMOTER_API_BASE_URL;
  await standin.close();
});

async function runImport(
  api: Api,
  programId: string,
  options: { dry_run?: boolean; key?: string; currency?: string | null } = {},
) {
  const currency = options.currency === undefined ? 'USD' : options.currency;
  return runImportOf(
    api,
    programId,
    'firstpromoter',
    { api_key: options.key ?? KEY, account_id: ACCOUNT, ...(currency ? { currency } : {}) },
    options.dry_run,
  );
}

const EXPECTED = {
  affiliates: { created: 2, already_present: 0, skipped: 1 },
  customers: { created: 2, already_present: 0, skipped: 1 },
  payouts: { created: 1, already_present: 0, skipped: 1 },
  conversions: { created: 4, already_present: 0, skipped: 0 },
  commissions: { created: 4, already_present: 0, skipped: 1 },
};

describe('FirstPromoter import', () => {
  it('a dry run reads every page, writes nothing and reports what it would do and skip', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, { dry_run: true });
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts).toEqual(EXPECTED);
    expect(done.skipped).toEqual(
      expect.arrayContaining([
        { kind: 'affiliates', source_id: '103', reason: expect.stringContaining('e-mail') },
        { kind: 'customers', source_id: '3', reason: expect.stringContaining('no uid or e-mail') },
        { kind: 'payouts', source_id: '502', reason: expect.stringContaining('not paid') },
        { kind: 'commissions', source_id: '15', reason: expect.stringContaining('not money') },
      ]),
    );
    expect(
      standin.requests
        .filter((r) => r.path.startsWith('/api/v2/company/promoters'))
        .map((r) => new URL(r.path, 'http://x').searchParams.get('page')),
    ).toEqual(['1', '2', '3']);
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);

    // Without the account's currency, a payout (which names none) is skipped, saying what to give.
    const unknown = await runImport(m.api, m.programId, { dry_run: true, currency: null });
    expect(unknown.skipped).toContainEqual({
      kind: 'payouts',
      source_id: '501',
      reason: expect.stringContaining('credentials.currency'),
    });
  });

  it('imports promoters with every ref token, customers, conversions, commissions and the paid payout in their currency; 429 and 500 waited out; a rerun changes nothing', async () => {
    const m = await merchant();
    standin.rateLimitOnce.add('/api/v2/company/commissions');
    standin.failures.set('/api/v2/company/referrals', 1);
    const done = await runImport(m.api, m.programId);
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts).toEqual(EXPECTED);
    expect(standin.requests.some((r) => r.path.startsWith('/api/v2/company/commissions') && r.status === 429)).toBe(
      true,
    );
    expect(standin.requests.some((r) => r.path.startsWith('/api/v2/company/referrals') && r.status === 500)).toBe(true);

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
    for (const ref of ['ada', 'ada-promo']) {
      const click = await m.api.post('/api/clicks', { ref });
      expect(click.status, JSON.stringify(click.body)).toBe(201);
      expect(click.body.data.click.affiliate_id).toBe(ada.id);
    }

    const conversions = (await m.api.get('/api/conversions')).body.data.conversions;
    expect(conversions.find((c: any) => c.external_id === 'evt_11')).toMatchObject({
      amount: 61.7,
      currency: 'EUR',
      occurred_at: '2025-03-01T12:00:00.000Z',
      customer_id: 'cus_1',
      affiliate_id: ada.id,
    });

    const commissions = (await m.api.get('/api/commissions?limit=100')).body.data.commissions;
    expect(Object.fromEntries(commissions.map((c: any) => [`${c.amount} ${c.currency}`, c.status]))).toEqual({
      '12.34 USD': 'pending',
      '25 USD': 'paid',
      '10 USD': 'approved',
      '7 USD': 'reversed',
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

    const again = await runImport(m.api, m.programId);
    expect(again.status).toBe('succeeded');
    for (const kind of ['affiliates', 'customers', 'payouts', 'conversions', 'commissions'] as const)
      expect(again.counts[kind].created).toBe(0);
    expect(again.counts.commissions.already_present).toBe(4);
  });

  it('a wrong API key fails the import with a message that says so, and writes nothing', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, { key: 'wrong' });
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/FirstPromoter refused the credentials \(HTTP 401\)/);
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
  });

  it('names a missing credential with 400', async () => {
    const m = await merchant();
    expectError(
      await m.api.post('/api/imports', {
        source: 'firstpromoter',
        credentials: { api_key: KEY },
        program_id: m.programId,
      }),
      400,
      'credentials.account_id: Required (FirstPromoter Account ID)',
    );
    expectError(
      await m.api.post('/api/imports', {
        source: 'firstpromoter',
        credentials: { api_key: KEY, account_id: ACCOUNT, currency: 'dollars' },
        program_id: m.programId,
      }),
      400,
      /credentials.currency: must be a three-letter ISO 4217 code/,
    );
  });
});
