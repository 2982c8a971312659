import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchant, runImport as runImportOf } from './import-helpers.js';
import { expectError, type Api } from '../support/api.js';
import { startToltStandin, type ToltStandin } from './tolt-standin.js';

/**
 * Imports from Tolt's REST API (https://docs.tolt.com/introduction), against a local stand-in that
 * speaks it (tolt-standin.ts: Bearer API key, `program_id` + `limit` + `starting_after` pagination
 * with `has_more`, 401 on a wrong key, 429 with Retry-After, 500 on demand). Objects follow the
 * documented examples: https://docs.tolt.com/partners/list, https://docs.tolt.com/commissions/retrieve.
 */
const KEY = 'tlt_live_test0123';
const PROGRAM = 'prg_test';
const A1 = 'part_ada';
const A2 = 'part_bob';

const partner = (id: string, email: string, first: string, extra: object = {}) => ({
  id,
  first_name: first,
  last_name: 'Example',
  email,
  company_name: null,
  program_id: PROGRAM,
  organization_id: 'org_1',
  group_id: 'grp_1',
  payout_method: 'paypal',
  payout_details: { email: `${first.toLowerCase()}-pay@example.com` },
  country_code: 'US',
  created_at: '2025-01-13T10:06:11.251Z',
  ...extra,
});
const link = (id: string, partnerId: string, value: string) => ({
  id,
  param: 'ref',
  value,
  partner_id: partnerId,
  program_id: PROGRAM,
  created_at: '2025-01-13T10:06:11.251Z',
});
const customer = (id: string, customerId: string, partnerId: string | null) => ({
  id,
  customer_id: customerId,
  email: `${customerId}@example.com`,
  name: `Customer ${customerId}`,
  partner_id: partnerId,
  program_id: PROGRAM,
  created_at: '2025-01-14T10:00:00.000Z',
});
const commission = (
  id: string,
  status: string,
  cents: number,
  currency: string | null,
  partnerId: string,
  customerId: string,
  extra: object = {},
) => ({
  id,
  amount: String(cents),
  revenue: String(cents * 5),
  currency,
  status,
  type: 'sale',
  source: 'stripe',
  partner_id: partnerId,
  customer_id: customerId,
  transaction_id: `txn_${id}`,
  charge_id: `ch_${id}`,
  payout_id: null,
  program_id: PROGRAM,
  organization_id: 'org_1',
  scheduled_approval_date: status === 'pending' ? '2099-01-01T00:00:00.000Z' : null,
  created_at: '2025-03-01T12:00:00.000Z',
  updated_at: '2025-03-01T12:00:00.000Z',
  ...extra,
});

const DATA = {
  partners: [
    partner(A1, 'ada@example.com', 'Ada'),
    partner(A2, 'bob@example.com', 'Bob', { status: 'suspended' }),
    partner('part_bad', 'not-an-email', 'Nope'),
  ],
  links: [link('lnk_1', A1, 'ada'), link('lnk_2', A2, 'bob'), link('lnk_3', A1, 'ada-promo')],
  customers: [customer('cust_1', 'cus_1', A1), customer('cust_2', 'cus_2', A2), customer('cust_3', 'cus_3', null)],
  commissions: [
    commission('comm_pending', 'pending', 1234, 'eur', A1, 'cust_1'),
    commission('comm_paid', 'paid', 2500, 'usd', A1, 'cust_1', {
      payout_id: 'po_1',
      updated_at: '2025-04-05T00:00:00.000Z',
    }),
    commission('comm_approved', 'approved', 1000, 'usd', A2, 'cust_2'),
    commission('comm_rejected', 'rejected', 700, 'gbp', A2, 'cust_2'),
    commission('comm_nocurrency', 'approved', 100, null, A1, 'cust_1'),
  ],
};

let standin: ToltStandin;
beforeAll(async () => {
  standin = await startToltStandin(KEY, PROGRAM, DATA);
  process.env.IMPORT_TOLT_API_BASE_URL = standin.url;
});
afterAll(async () => {
  delete process.env.IMPORT_TOLT_API_BASE_URL;
  await standin.close();
});

async function runImport(api: Api, programId: string, options: { dry_run?: boolean; key?: string } = {}) {
  return runImportOf(api, programId, 'tolt', { api_key: options.key ?? KEY, program_id: PROGRAM }, options.dry_run);
}

const EXPECTED = {
  affiliates: { created: 2, already_present: 0, skipped: 1 },
  customers: { created: 2, already_present: 0, skipped: 1 },
  payouts: { created: 1, already_present: 0, skipped: 0 },
  conversions: { created: 4, already_present: 0, skipped: 0 },
  commissions: { created: 4, already_present: 0, skipped: 1 },
};

describe('Tolt import', () => {
  it('a dry run follows the cursors to the end, writes nothing and reports what it would do and skip', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, { dry_run: true });
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts).toEqual(EXPECTED);
    expect(done.skipped).toEqual(
      expect.arrayContaining([
        { kind: 'affiliates', source_id: 'part_bad', reason: expect.stringContaining('e-mail') },
        { kind: 'customers', source_id: 'cust_3', reason: expect.stringContaining('partner') },
        { kind: 'commissions', source_id: 'comm_nocurrency', reason: expect.stringContaining('no currency') },
      ]),
    );
    // Two a page: the second page was asked for with the first page's last id.
    expect(
      standin.requests.some((r) => r.path.startsWith('/v1/partners') && r.path.includes(`starting_after=part_bob`)),
    ).toBe(true);
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
    expect((await m.api.get('/api/commissions')).body.data.commissions).toEqual([]);
  });

  it('imports partners with every link, customers, conversions, commissions and the paid payout in their currency; a 429 and a 500 are waited out; a rerun changes nothing', async () => {
    const m = await merchant();
    standin.rateLimitOnce.add('/v1/commissions');
    standin.failures.set('/v1/customers', 1);
    const done = await runImport(m.api, m.programId);
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts).toEqual(EXPECTED);
    expect(standin.requests.some((r) => r.path.startsWith('/v1/commissions') && r.status === 429)).toBe(true);
    expect(standin.requests.some((r) => r.path.startsWith('/v1/customers') && r.status === 500)).toBe(true);

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
    expect(conversions.find((c: any) => c.external_id === 'txn_comm_pending')).toMatchObject({
      amount: 61.7,
      currency: 'EUR',
      occurred_at: '2025-03-01T12:00:00.000Z',
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

    const again = await runImport(m.api, m.programId);
    expect(again.status).toBe('succeeded');
    for (const kind of ['affiliates', 'customers', 'payouts', 'conversions', 'commissions'] as const)
      expect(again.counts[kind].created).toBe(0);
    expect(again.counts.commissions.already_present).toBe(4);
    expect((await m.api.get('/api/commissions?limit=100')).body.data.commissions).toHaveLength(4);
  });

  it('a wrong API key fails the import with a message that says so, and writes nothing', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, { key: 'wrong' });
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/Tolt refused the credentials \(HTTP 401\)/);
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
  });

  it('names a missing credential with 400', async () => {
    const m = await merchant();
    expectError(
      await m.api.post('/api/imports', {
        source: 'tolt',
        credentials: { program_id: PROGRAM },
        program_id: m.programId,
      }),
      400,
      'credentials.api_key: Required (Tolt API key)',
    );
    expectError(
      await m.api.post('/api/imports', { source: 'tolt', credentials: { api_key: KEY }, program_id: m.programId }),
      400,
      /credentials.program_id: Required/,
    );
  });
});

describe('Tolt cursors', () => {
  it('a resumed import (a new reader) asked for page 2 walks the cursors from page 1 to reach it', async () => {
    const { ToltReader } = await import('../../server/src/modules/imports/sources/tolt.js');
    const reader = new ToltReader({ api_key: KEY, program_id: PROGRAM }, standin.url);
    const page2 = await reader.readPage('affiliates', 2);
    expect(page2.batch.skipped?.map((s) => s.source_id)).toEqual(['part_bad']);
    expect(page2.next).toBeNull();
    const fresh = new ToltReader({ api_key: KEY, program_id: PROGRAM }, standin.url);
    const page1 = await fresh.readPage('affiliates', 1);
    expect(page1.batch.affiliates?.map((a) => [a.source_id, a.tokens])).toEqual([
      [A1, ['ada', 'ada-promo']],
      [A2, ['bob']],
    ]);
    expect(page1.next).toBe(2);
  });

  it("follows v2's next_cursor when the answer carries one (passed back as starting_after)", async () => {
    const v2 = await startToltStandin(KEY, PROGRAM, DATA, 2, true);
    try {
      const { ToltReader } = await import('../../server/src/modules/imports/sources/tolt.js');
      const reader = new ToltReader({ api_key: KEY, program_id: PROGRAM }, v2.url);
      expect((await reader.readPage('commissions', 1)).next).toBe(2);
      expect((await reader.readPage('commissions', 2)).next).toBe(3);
      const last = await reader.readPage('commissions', 3);
      // The commissions are read; the refunds' pass over the same list follows (tolt.ts REFUND_PASS).
      expect(last.next).toBe(1_000_001);
      expect(last.batch.skipped?.map((s) => s.source_id)).toEqual(['comm_nocurrency']);
      const asked = v2.requests
        .filter((r) => r.path.startsWith('/v1/commissions'))
        .map((r) => new URL(r.path, 'http://x').searchParams.get('starting_after'));
      expect(asked).toEqual([
        null,
        `cur_${Buffer.from('comm_paid').toString('base64url')}`,
        `cur_${Buffer.from('comm_rejected').toString('base64url')}`,
      ]);
    } finally {
      await v2.close();
    }
  });
});
