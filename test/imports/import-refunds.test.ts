import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchant, runImport } from './import-helpers.js';
import { startRewardfulStandin, type Standin } from './rewardful-standin.js';
import { startToltStandin, type ToltStandin } from './tolt-standin.js';

/**
 * Refunds are counted once, as each source documents its amounts:
 * - Rewardful (https://developers.rewardful.com/rest-api/sales/the-sale-object):
 *   `sale_amount_cents` is the sale net of `refund_amount_cents` (and of tax): the amount sold is
 *   their sum, of which the refund was refunded;
 * - Tolt (https://docs.tolt.com/guides/refunds, concepts/commission-lifecycle): an unpaid
 *   commission of a refunded transaction becomes `refunded` with amount 0 (its `revenue` still the
 *   sale's); a paid one stays paid and a `type: "refund"` commission with a negative amount claws it
 *   back. Tolt refunds whole transactions only.
 */
const RW_SECRET = 'rw-refunds';
const TOLT_KEY = 'tlt_refunds';
const TOLT_PROGRAM = 'prg_refunds';

const rwSale = (id: string, charge: number, refund: number, customer: string) => ({
  id: `sale-${id}`,
  currency: 'USD',
  charged_at: '2024-06-10T12:00:00.000Z',
  created_at: '2024-06-10T12:00:00.000Z',
  charge_amount_cents: charge,
  refund_amount_cents: refund,
  tax_amount_cents: 0,
  sale_amount_cents: charge - refund,
  referral: {
    id: `ref-${customer}`,
    stripe_customer_id: customer,
    conversion_state: 'conversion',
    customer: { platform: 'stripe', id: customer, name: null, email: null },
    affiliate: { id: 'aff-bob' },
  },
});
const rwCommission = (id: string, state: string, cents: number, sale: object) => ({
  id,
  created_at: '2024-06-10T12:00:00.000Z',
  amount: cents,
  currency: 'USD',
  state,
  due_at: '2024-07-10T00:00:00.000Z',
  paid_at: null,
  voided_at: state === 'voided' ? '2024-06-20T00:00:00.000Z' : null,
  sale,
});

const toltCommission = (id: string, extra: object) => ({
  id,
  amount: '1470',
  revenue: '4900',
  currency: 'usd',
  status: 'approved',
  type: 'sale',
  partner_id: 'part_sam',
  customer_id: 'cust_jane',
  transaction_id: `txn_${id}`,
  payout_id: null,
  scheduled_approval_date: null,
  created_at: '2025-03-01T12:00:00.000Z',
  updated_at: '2025-03-01T12:00:00.000Z',
  ...extra,
});

let rewardful: Standin;
let tolt: ToltStandin;
beforeAll(async () => {
  rewardful = await startRewardfulStandin(RW_SECRET, {
    affiliates: [
      {
        id: 'aff-bob',
        email: 'bob@example.com',
        first_name: 'Bob',
        last_name: 'B',
        state: 'active',
        links: [{ id: 'l1', token: 'bob' }],
      },
    ],
    referrals: [],
    payouts: [],
    commissions: [
      rwCommission('com-kept', 'due', 1599, rwSale('kept', 7995, 0, 'cus_kept')),
      rwCommission('com-full', 'voided', 400, rwSale('full', 2000, 2000, 'cus_full')),
      rwCommission('com-part', 'due', 700, rwSale('part', 5000, 1500, 'cus_part')),
    ],
  });
  tolt = await startToltStandin(TOLT_KEY, TOLT_PROGRAM, {
    partners: [
      { id: 'part_sam', email: 'sam@example.com', first_name: 'Sam', last_name: 'R', program_id: TOLT_PROGRAM },
    ],
    links: [],
    customers: [{ id: 'cust_jane', customer_id: 'cus_jane', email: null, name: null, partner_id: 'part_sam' }],
    commissions: [
      // Listed newest first: the refund of the paid one comes before its sale.
      toltCommission('comm_clawback', {
        type: 'refund',
        amount: '-1470',
        revenue: '-4900',
        transaction_id: 'txn_comm_paid',
        created_at: '2025-05-01T12:00:00.000Z',
      }),
      toltCommission('comm_unpaid', { status: 'refunded', amount: '0' }),
      toltCommission('comm_paid', { status: 'paid', payout_id: 'po_1' }),
    ],
  });
  process.env.IMPORT_REWARDFUL_API_BASE_URL = rewardful.url;
  process.env.IMPORT_TOLT_API_BASE_URL = tolt.url;
});
afterAll(async () => {
  delete process.env.IMPORT_REWARDFUL_API_BASE_URL;
  delete process.env.IMPORT_TOLT_API_BASE_URL;
  await rewardful.close();
  await tolt.close();
});

const byExternalId = (conversions: any[]) =>
  Object.fromEntries(conversions.map((c) => [c.external_id, { amount: c.amount, refunded_amount: c.refunded_amount }]));

describe('imported refunds are counted once', () => {
  it('Rewardful: sale_amount_cents is net of the refund; the sale keeps its amount and the refund once', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, 'rewardful', { api_secret: RW_SECRET });
    expect(done.status, done.error).toBe('succeeded');
    const conversions = (await m.api.get('/api/conversions?limit=100')).body.data.conversions;
    expect(byExternalId(conversions)).toEqual({
      'sale-kept': { amount: 79.95, refunded_amount: 0 },
      'sale-full': { amount: 20, refunded_amount: 20 },
      'sale-part': { amount: 50, refunded_amount: 15 },
    });
    // Bob's net revenue: 79.95 + 0 + 35.
    const net = conversions.reduce((sum: number, c: any) => sum + c.amount - c.refunded_amount, 0);
    expect(net).toBeCloseTo(114.95, 2);
  });

  it('Tolt: a refunded unpaid sale is kept refunded with no entry; a paid one is refunded once and clawed back', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, 'tolt', { api_key: TOLT_KEY, program_id: TOLT_PROGRAM });
    expect(done.status, done.error).toBe('succeeded');
    const conversions = (await m.api.get('/api/conversions?limit=100')).body.data.conversions;
    expect(byExternalId(conversions)).toEqual({
      txn_comm_unpaid: { amount: 49, refunded_amount: 49 },
      txn_comm_paid: { amount: 49, refunded_amount: 49 },
    });
    const commissions = (await m.api.get('/api/commissions?limit=100')).body.data.commissions;
    expect(commissions.map((c: any) => [c.type, c.amount, c.status]).sort()).toEqual([
      ['clawback', -14.7, 'approved'],
      ['sale', 14.7, 'paid'],
    ]);
    // The clawback keeps the date Tolt recorded the refund on.
    expect(commissions.find((c: any) => c.type === 'clawback').created_at).toBe('2025-05-01T12:00:00.000Z');
    expect(done.skipped).toContainEqual(
      expect.objectContaining({
        kind: 'commissions',
        source_id: 'comm_unpaid',
        reason: expect.stringMatching(/amount 0/),
      }),
    );
    // A rerun changes nothing: the refund is not applied twice.
    const again = await runImport(m.api, m.programId, 'tolt', { api_key: TOLT_KEY, program_id: TOLT_PROGRAM });
    expect(again.counts.commissions.created).toBe(0);
    expect(byExternalId((await m.api.get('/api/conversions?limit=100')).body.data.conversions)).toEqual(
      byExternalId(conversions),
    );
  });
});
