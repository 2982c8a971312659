import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchant, runImport } from './import-helpers.js';
import { startRewardfulStandin, type Standin } from './rewardful-standin.js';

/**
 * Campaign terms are not left behind silently (issue 47 item 5): Rewardful's campaigns
 * (https://developers.rewardful.com/rest-api/campaigns/the-campaign-object) are compared with the
 * program's; a dry run lists the differences; a real run with differences needs the merchant's
 * choice (`terms`: `source` or `program`) and without it fails before writing anything.
 */
const SECRET = 'rw-terms';
const campaign = {
  id: 'camp-1',
  name: 'Partners',
  default: true,
  reward_type: 'percent',
  commission_percent: 25.0,
  commission_amount_cents: null,
  commission_amount_currency: null,
  minimum_payout_cents: 5000,
  minimum_payout_currency: 'USD',
  max_commission_period_months: 12,
  max_commissions: null,
  days_before_referrals_expire: 60,
  days_until_commissions_are_due: 45,
};

let standin: Standin;
beforeAll(async () => {
  standin = await startRewardfulStandin(SECRET, {
    affiliates: [
      { id: 'aff-1', email: 'lee@example.com', first_name: 'Lee', state: 'active', links: [{ id: 'l', token: 'lee' }] },
    ],
    referrals: [],
    payouts: [],
    commissions: [],
    campaigns: [campaign],
  });
  process.env.IMPORT_REWARDFUL_API_BASE_URL = standin.url;
});
afterAll(async () => {
  delete process.env.IMPORT_REWARDFUL_API_BASE_URL;
  await standin.close();
});

const start = (m: Awaited<ReturnType<typeof merchant>>, options: { dry_run?: boolean; terms?: string } = {}) =>
  m.api.post('/api/imports', {
    source: 'rewardful',
    credentials: { api_secret: SECRET },
    program_id: m.programId,
    dry_run: options.dry_run ?? false,
    ...(options.terms ? { terms: options.terms } : {}),
  });

async function program(m: Awaited<ReturnType<typeof merchant>>) {
  return (await m.api.get(`/api/programs/${m.programId}`)).body.data.program;
}

describe("the source's campaign terms", () => {
  it('a dry run lists where they differ from the program; a real run without a choice fails, writing nothing', async () => {
    const m = await merchant();
    const before = await program(m);
    const dry = await runImport(m.api, m.programId, 'rewardful', { api_secret: SECRET }, true);
    expect(dry.status, dry.error).toBe('succeeded');
    expect(dry.terms).toMatchObject({ read: true, campaigns: 1, applied: null });
    expect(dry.terms.differences).toEqual(
      expect.arrayContaining([
        { campaign: 'Partners', field: 'commission_value', source: '25', program: String(before.commission_value) },
        { campaign: 'Partners', field: 'minimum_payout', source: '50.00', program: String(before.minimum_payout) },
        { campaign: 'Partners', field: 'hold_days', source: '45', program: String(before.hold_days) },
      ]),
    );

    const res = await start(m);
    expect(res.status).toBe(202);
    const { finished } = await import('./import-helpers.js');
    const failed = await finished(m.api, res.body.data.import.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(
      /^The campaign terms at rewardful differ from the program's: commission_value 25 at rewardful \(Partners\), 30 here;/,
    );
    expect(failed.error).toMatch(/Nothing was imported\. Start the import again with terms "source"/);
    expect((await m.api.get('/api/affiliates')).body.data.affiliates).toEqual([]);
  });

  it('"program" keeps the program\'s terms, knowingly; "source" gives the program the source\'s', async () => {
    const kept = await merchant();
    const before = await program(kept);
    const keptRun = await runImport(kept.api, kept.programId, 'rewardful', { api_secret: SECRET }, false);
    expect(keptRun.status).toBe('failed');
    const { finished } = await import('./import-helpers.js');
    const keep = await finished(kept.api, (await start(kept, { terms: 'program' })).body.data.import.id);
    expect(keep.status, keep.error).toBe('succeeded');
    expect(keep.terms.applied).toBe('program');
    expect(await program(kept)).toMatchObject({
      commission_value: before.commission_value,
      hold_days: before.hold_days,
    });

    const taken = await merchant();
    // A sale before the import: the program's rule (30 %) is in use, and cached.
    const native = await taken.api.post('/api/affiliates', {
      email: 'native@example.com',
      program_id: taken.programId,
    });
    expect(native.status, JSON.stringify(native.body)).toBe(201);
    const customer = await taken.api.post('/api/customers', {
      customer_id: 'cus_native',
      ref: native.body.data.affiliate.slug,
    });
    expect(customer.status, JSON.stringify(customer.body)).toBe(201);
    const sale = async (id: string) =>
      (await taken.api.post('/api/conversions', { external_id: id, amount: 100, customer_id: 'cus_native' })).body.data
        .conversion.commission_amount;
    expect(await sale('before-import')).toBe(30);
    const take = await finished(taken.api, (await start(taken, { terms: 'source' })).body.data.import.id);
    expect(take.status, take.error).toBe('succeeded');
    expect(take.terms.applied).toBe('source');
    expect(await program(taken)).toMatchObject({
      commission_type: 'percent',
      commission_value: 25,
      minimum_payout: 50,
      commission_window_months: 12,
      commission_max_conversions: null,
      hold_days: 45,
      click_window_days: 60,
    });
    expect(take.counts.affiliates.created).toBe(1);
    // The next sale earns the terms taken (every instance dropped the cached rule on commit).
    await new Promise((r) => setTimeout(r, 300));
    expect(await sale('after-import')).toBe(25);
  });
});
