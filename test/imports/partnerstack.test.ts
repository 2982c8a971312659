import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerStackReader } from '../../server/src/modules/imports/sources/partnerstack.js';
import { expectError } from '../support/api.js';
import { merchant, runImport } from './import-helpers.js';
import { startPartnerStackStandin } from './partnerstack-standin.js';
import type { Standin } from './rewardful-standin.js';

/**
 * Imports from PartnerStack's vendor API v2 (https://docs.partnerstack.com/reference) against a
 * local stand-in that speaks it (partnerstack-standin.ts: Basic auth with public and secret key,
 * `starting_after` cursor pagination with `has_more`, 401 on wrong keys, 429 with Retry-After).
 */
const KEYS = { publicKey: 'pk_live_123', secretKey: 'sk_live_456', token: 'ps-token-789' };
const CREDENTIALS = { public_key: KEYS.publicKey, secret_key: KEYS.secretKey };
const P1 = 'part_ada';
const P2 = 'part_bob';
const MARCH = Date.parse('2024-03-01T12:00:00.000Z');

const partnership = (key: string, email: string, first: string, partnerKey: string, extra: object = {}) => ({
  key,
  email,
  first_name: first,
  last_name: 'Example',
  partner_key: partnerKey,
  approved_status: 'approved',
  archived: false,
  created_at: MARCH,
  group: { key: 'grp', name: 'Default' },
  ...extra,
});
const reward = (
  key: string,
  status: string,
  cents: number,
  currency: string,
  partner: string,
  customer: string,
  extra: object = {},
) => ({
  key,
  amount: cents,
  currency,
  created_at: MARCH + 3600_000,
  reward_status: status,
  description: 'Sale reward',
  partnership: { key: partner, email: `${partner}@example.com` },
  customer: { key: `ps_${customer}`, customer_key: customer, email: `${customer}@example.com` },
  transaction: { key: `tx_${key}`, amount: cents * 5, currency, created_at: MARCH },
  ...extra,
});

const DATA = {
  partnerships: [
    partnership(P1, 'Ada@example.com', 'Ada', 'ada-ps'),
    partnership(P2, 'bob@example.com', 'Bob', 'bob-ps', { archived: true }),
    partnership('part_bad', 'not-an-email', 'Nope', 'nope'),
  ],
  customers: [
    {
      key: 'ps_cus_1',
      customer_key: 'cus_1',
      provider_key: 'cus_stripe_1',
      email: 'one@example.com',
      name: 'One',
      partnership_key: P1,
      created_at: MARCH,
      test: false,
    },
    {
      key: 'ps_cus_2',
      customer_key: 'cus_2',
      provider_key: null,
      email: 'two@example.com',
      name: 'Two',
      partnership_key: P2,
      created_at: MARCH,
      test: false,
    },
    {
      key: 'ps_cus_3',
      customer_key: 'cus_3',
      email: 'three@example.com',
      name: 'Three',
      partnership_key: null,
      created_at: MARCH,
      test: false,
    },
  ],
  rewards: [
    reward('rwd_pending', 'pending', 1234, 'EUR', P1, 'cus_1'),
    reward('rwd_paid', 'paid', 2500, 'USD', P1, 'cus_1'),
    reward('rwd_approved', 'approved', 1000, 'USD', P2, 'cus_2'),
    reward('rwd_declined', 'declined', 700, 'GBP', P2, 'cus_2'),
    reward('rwd_action', 'approved', 500, 'USD', P1, 'cus_1', { transaction: null }),
  ],
};

let standin: Standin;
beforeAll(async () => {
  standin = await startPartnerStackStandin(KEYS, DATA);
  process.env.IMPORT_PARTNERSTACK_API_BASE_URL = standin.url;
});
afterAll(async () => {
  delete process.env.IMPORT_PARTNERSTACK_API_BASE_URL;
  await standin.close();
});

const EXPECTED = {
  affiliates: { created: 2, already_present: 0, skipped: 1 },
  customers: { created: 2, already_present: 0, skipped: 1 },
  payouts: { created: 0, already_present: 0, skipped: 0 },
  conversions: { created: 4, already_present: 0, skipped: 0 },
  commissions: { created: 4, already_present: 0, skipped: 1 },
};

describe('PartnerStack import', () => {
  it('a dry run follows the starting_after cursor to the end, writes nothing and reports what it would do and skip', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, 'partnerstack', CREDENTIALS, true);
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts).toEqual(EXPECTED);
    expect(done.skipped).toEqual(
      expect.arrayContaining([
        { kind: 'affiliates', source_id: 'part_bad', reason: expect.stringContaining('e-mail') },
        { kind: 'customers', source_id: 'ps_cus_3', reason: expect.stringContaining('no partnership') },
        { kind: 'commissions', source_id: 'rwd_action', reason: expect.stringContaining('no transaction') },
      ]),
    );
    expect(
      standin.requests.some(
        (r) => r.path.startsWith('/api/v2/partnerships') && r.path.includes(`starting_after=${P2}`),
      ),
    ).toBe(true);
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
    expect((await m.api.get('/api/commissions')).body.data.commissions).toEqual([]);
  });

  it('imports partners, their partner_key, customers, transactions and rewards in their currency; waits out a 429; a rerun changes nothing', async () => {
    const m = await merchant();
    standin.rateLimitOnce.add('/api/v2/rewards');
    const done = await runImport(m.api, m.programId, 'partnerstack', CREDENTIALS);
    expect(done.status, done.error).toBe('succeeded');
    expect(done.counts).toEqual(EXPECTED);
    expect(standin.requests.some((r) => r.path.startsWith('/api/v2/rewards') && r.status === 429)).toBe(true);

    const affiliates = (await m.api.get('/api/affiliates?limit=100')).body.data.affiliates;
    const ada = affiliates.find((a: any) => a.email === 'ada@example.com');
    expect(ada).toMatchObject({ name: 'Ada Example', status: 'active', slug: 'ada-ps', payout_email: null });
    expect(affiliates.find((a: any) => a.email === 'bob@example.com')).toMatchObject({
      status: 'disabled',
      slug: 'bob-ps',
    });
    const click = await m.api.post('/api/clicks', { ref: 'ada-ps' });
    expect(click.status, JSON.stringify(click.body)).toBe(201);
    expect(click.body.data.click.affiliate_id).toBe(ada.id);

    const conversions = (await m.api.get('/api/conversions')).body.data.conversions;
    expect(conversions.find((c: any) => c.external_id === 'tx_rwd_pending')).toMatchObject({
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

    const again = await runImport(m.api, m.programId, 'partnerstack', CREDENTIALS);
    expect(again.status).toBe('succeeded');
    for (const kind of ['affiliates', 'customers', 'payouts', 'conversions', 'commissions'] as const)
      expect(again.counts[kind].created).toBe(0);
    expect(again.counts.commissions.already_present).toBe(4);
    expect((await m.api.get('/api/commissions?limit=100')).body.data.commissions).toHaveLength(4);
  });

  it('wrong keys fail the import with a message that says so, and write nothing', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, 'partnerstack', {
      public_key: KEYS.publicKey,
      secret_key: 'wrong',
    });
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(
      /PartnerStack refused the credentials \(HTTP 401\): check the public and secret keys\. Nothing was imported/,
    );
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
    expectError(
      await m.api.post('/api/imports', {
        source: 'partnerstack',
        credentials: { public_key: 'x' },
        program_id: m.programId,
      }),
      400,
      /credentials.public_key and credentials.secret_key: Required/,
    );
  });

  it('a resumed import finds its page again by walking the cursor; a 500 is retried', async () => {
    const sleeps: number[] = [];
    const bearer = new PartnerStackReader({ access_token: KEYS.token }, standin.url, {
      sleep: async (ms) => void sleeps.push(ms),
    });
    standin.failures.set(`/api/v2/rewards?starting_after=rwd_paid`, 1);
    // A fresh reader (a restarted job) asked for page 2 directly.
    const page2 = await bearer.readPage('commissions', 2);
    expect(page2.batch.commissions!.map((c) => c.source_id)).toEqual(['rwd_approved', 'rwd_declined']);
    expect(page2.next).toBe(3);
    expect(standin.requests.some((r) => r.path.includes('starting_after=rwd_paid') && r.status === 500)).toBe(true);
    expect(sleeps.length).toBeGreaterThan(0);
    const page3 = await bearer.readPage('commissions', 3);
    expect(page3.next).toBeNull();
    expect(page3.batch.skipped).toEqual([
      { kind: 'commissions', source_id: 'rwd_action', reason: expect.stringContaining('no transaction') },
    ]);
  });
});
