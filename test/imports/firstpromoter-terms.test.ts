import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FirstPromoterReader } from '../../server/src/modules/imports/sources/firstpromoter.js';
import { finished, merchant, runImport } from './import-helpers.js';
import { startFirstPromoterStandin, type FirstPromoterStandin } from './firstpromoter-standin.js';

/**
 * FirstPromoter's campaign terms (issue 47 item 5): its campaigns (GET /company/campaigns:
 * visitor_cookie_life, rewards_for_promoters[].reward_id) and the promoter rewards they name
 * (GET /company/rewards?scope=promoters:
 * https://docs.firstpromoter.com/api-reference-v2/api-advanced/rewards/get-rewards) are compared
 * with the program's, as Rewardful's campaigns are (import-terms.test.ts).
 */
const KEY = 'fp-terms-key';
const ACCOUNT = 'acc_terms';
const CREDENTIALS = { api_key: KEY, account_id: ACCOUNT, currency: 'USD' };

const reward = (id: number, extra: object) => ({
  id,
  name: `Reward ${id}`,
  is_promoter_reward: true,
  promoter_reward_type: 'sale',
  duration: 'forever',
  duration_in_months: null,
  schemas: [{ unit: 'cash', amount: 20, flat_amount: false, rules: [] }],
  ...extra,
});
const campaign = (id: number, name: string, cookie: number, rewardIds: number[]) => ({
  id,
  name,
  visitor_cookie_life: cookie,
  ref_token_param: '?fpr',
  rewards_for_promoters: rewardIds.map((rewardId) => ({
    apply_on: 'all',
    product_ids: [],
    reward_id: rewardId,
    reward: { name: `Reward ${rewardId}`, promoter_reward_type: 'sale' },
  })),
});
const REWARDS = [
  reward(7, { duration: 'repeating', duration_in_months: 12 }),
  // A customer's reward (scope referrals): never read as a promoter's rate.
  reward(8, { is_promoter_reward: false, schemas: [{ unit: 'discount_per', amount: 10, flat_amount: false }] }),
  reward(9, { duration: 'once', schemas: [{ unit: 'cash', amount: 15.5, flat_amount: false, rules: [] }] }),
  reward(10, { schemas: [{ unit: 'cash', amount: 1000, flat_amount: true, rules: [] }] }),
  reward(11, {
    schemas: [
      {
        unit: 'cash',
        amount: 30,
        flat_amount: false,
        rules: [{ type: 'customer_sales_count', condition: 'less than', value: 3, operator: 'and' }],
      },
    ],
  }),
];

let standin: FirstPromoterStandin;
beforeAll(async () => {
  standin = await startFirstPromoterStandin(KEY, ACCOUNT, {
    promoters: [
      {
        id: 1,
        email: 'lee@example.com',
        name: 'Lee Example',
        status: 'active',
        default_ref_id: 'lee',
        promoter_campaigns: [{ id: 10, campaign: { id: 1, name: 'Main' }, ref_token: 'lee', state: 'accepted' }],
      },
    ],
    referrals: [],
    payouts: [],
    commissions: [],
    campaigns: [campaign(1, 'Main campaign', 40, [7])],
    rewards: REWARDS,
  });
  process.env.IMPORT_FIRSTPROMOTER_API_BASE_URL = standin.url;
});
afterAll(async () => {
  delete process.env.IMPORT_FIRSTPROMOTER_API_BASE_URL;
  await standin.close();
});

type Merchant = Awaited<ReturnType<typeof merchant>>;
const start = (m: Merchant, terms?: string) =>
  m.api.post('/api/imports', {
    source: 'firstpromoter',
    credentials: CREDENTIALS,
    program_id: m.programId,
    dry_run: false,
    ...(terms ? { terms } : {}),
  });
const program = async (m: Merchant) => (await m.api.get(`/api/programs/${m.programId}`)).body.data.program;

describe("FirstPromoter's campaign terms", () => {
  it("are read from each campaign and its promoters' sale reward", async () => {
    const other = await startFirstPromoterStandin(KEY, ACCOUNT, {
      promoters: [],
      referrals: [],
      payouts: [],
      commissions: [],
      campaigns: [
        campaign(1, 'Main campaign', 40, [7]),
        campaign(2, 'Launch', 30, [9]),
        campaign(3, 'Flat', 90, [10]),
        campaign(4, 'Conditional', 45, [11]),
        campaign(5, 'Two rewards', 45, [7, 9]),
      ],
      rewards: REWARDS,
    });
    try {
      const terms = await new FirstPromoterReader(CREDENTIALS, other.url).readTerms();
      expect(terms).toEqual([
        {
          source_id: '1',
          name: 'Main campaign',
          currency: null,
          terms: {
            click_window_days: 40,
            commission_type: 'percent',
            commission_value: '20',
            commission_window_months: 12,
            commission_max_conversions: null,
          },
        },
        {
          source_id: '2',
          name: 'Launch',
          currency: null,
          terms: {
            click_window_days: 30,
            commission_type: 'percent',
            commission_value: '15.5',
            commission_window_months: null,
            commission_max_conversions: 1,
          },
        },
        // A flat amount (unit and currency undocumented), a conditional rate, and a choice of two
        // rewards: only the click window is compared.
        { source_id: '3', name: 'Flat', currency: null, terms: { click_window_days: 90 } },
        { source_id: '4', name: 'Conditional', currency: null, terms: { click_window_days: 45 } },
        { source_id: '5', name: 'Two rewards', currency: null, terms: { click_window_days: 45 } },
      ]);
      expect(other.requests.map((r) => r.path)).toEqual(
        expect.arrayContaining(['/api/v2/company/campaigns', '/api/v2/company/rewards?scope=promoters']),
      );
    } finally {
      await other.close();
    }
  });

  it('a dry run lists where they differ; a real run without a choice fails, writing nothing', async () => {
    const m = await merchant();
    const before = await program(m);
    const dry = await runImport(m.api, m.programId, 'firstpromoter', CREDENTIALS, true);
    expect(dry.status, dry.error).toBe('succeeded');
    expect(dry.terms).toMatchObject({ read: true, campaigns: 1, applied: null });
    expect(dry.terms.differences).toEqual(
      expect.arrayContaining([
        {
          campaign: 'Main campaign',
          field: 'commission_value',
          source: '20',
          program: String(before.commission_value),
        },
        { campaign: 'Main campaign', field: 'commission_window_months', source: '12', program: null },
        {
          campaign: 'Main campaign',
          field: 'click_window_days',
          source: '40',
          program: String(before.click_window_days),
        },
      ]),
    );
    expect(before.commission_window_months).toBeNull();

    const failed = await finished(m.api, (await start(m)).body.data.import.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(
      /^The campaign terms at firstpromoter differ from the program's: commission_value 20 at firstpromoter \(Main campaign\), 30 here;/,
    );
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
    expect(await program(m)).toMatchObject({ commission_value: before.commission_value });
  });

  it('with "source" the program takes them, and a sale after the import earns the new rate', async () => {
    const m = await merchant();
    const native = await m.api.post('/api/affiliates', { email: 'native@example.com', program_id: m.programId });
    expect(native.status, JSON.stringify(native.body)).toBe(201);
    const customer = await m.api.post('/api/customers', {
      customer_id: 'cus_native',
      ref: native.body.data.affiliate.slug,
    });
    expect(customer.status, JSON.stringify(customer.body)).toBe(201);
    const sale = async (id: string) =>
      (await m.api.post('/api/conversions', { external_id: id, amount: 100, customer_id: 'cus_native' })).body.data
        .conversion.commission_amount;
    expect(await sale('before-import')).toBe(30);

    const taken = await finished(m.api, (await start(m, 'source')).body.data.import.id);
    expect(taken.status, taken.error).toBe('succeeded');
    expect(taken.terms.applied).toBe('source');
    expect(taken.counts.affiliates.created).toBe(1);
    expect(await program(m)).toMatchObject({
      commission_type: 'percent',
      commission_value: 20,
      commission_window_months: 12,
      commission_max_conversions: null,
      click_window_days: 40,
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(await sale('after-import')).toBe(20);
  });
});
