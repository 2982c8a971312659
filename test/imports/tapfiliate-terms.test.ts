import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapfiliateReader } from '../../server/src/modules/imports/sources/tapfiliate.js';
import { finished, merchant, runImport } from './import-helpers.js';
import type { Standin } from './rewardful-standin.js';
import { startTapfiliateStandin } from './tapfiliate-standin.js';

/**
 * Tapfiliate's program terms (issue 47 item 5): its programs (GET /programs/: currency,
 * cookie_time, recurring_commissions) and their commission types
 * (GET /programs/{program_id}/commission-types/: type percentage or fixed, percentage, amount;
 * https://tapfiliate.com/docs/rest/#programs) are compared with the program's, as Rewardful's
 * campaigns are (import-terms.test.ts): a dry run lists the differences, a real run without a
 * choice writes nothing, and with "source" the program takes them and the next sale earns them.
 */
const KEY = 'tap-terms-key';
const PROGRAM = {
  id: 'main',
  title: 'Main program',
  currency: 'USD',
  cookie_time: 45,
  recurring_commissions: true,
  commission_types: [{ id: 'standard', name: 'Standard', type: 'percentage', percentage: 20, amount: null }],
};

let standin: Standin;
beforeAll(async () => {
  standin = await startTapfiliateStandin(KEY, {
    affiliates: [
      {
        id: 'lee-ex',
        firstname: 'Lee',
        lastname: 'Example',
        email: 'lee@example.com',
        referral_link: 'https://example.com/?ref=lee-ex',
      },
    ],
    customers: [],
    payments: [],
    conversions: [],
    programs: [PROGRAM],
  });
  process.env.IMPORT_TAPFILIATE_API_BASE_URL = standin.url;
});
afterAll(async () => {
  delete process.env.IMPORT_TAPFILIATE_API_BASE_URL;
  await standin.close();
});

type Merchant = Awaited<ReturnType<typeof merchant>>;
const start = (m: Merchant, terms?: string) =>
  m.api.post('/api/imports', {
    source: 'tapfiliate',
    credentials: { api_key: KEY },
    program_id: m.programId,
    dry_run: false,
    ...(terms ? { terms } : {}),
  });
const program = async (m: Merchant) => (await m.api.get(`/api/programs/${m.programId}`)).body.data.program;

describe("Tapfiliate's program terms", () => {
  it('are read from each program and its commission types', async () => {
    const other = await startTapfiliateStandin(KEY, {
      affiliates: [],
      customers: [],
      payments: [],
      conversions: [],
      programs: [
        PROGRAM,
        {
          id: 'resellers',
          title: 'Resellers',
          currency: 'EUR',
          cookie_time: 90,
          recurring_commissions: false,
          commission_types: [
            { id: 'sale', name: 'Sale', type: 'fixed', percentage: null, amount: 12.5 },
            { id: 'upsell', name: 'Upsell', type: 'percentage', percentage: 7.5, amount: null },
          ],
        },
      ],
    });
    try {
      const terms = await new TapfiliateReader({ api_key: KEY }, other.url).readTerms();
      expect(terms).toEqual([
        {
          source_id: 'main/standard',
          name: 'Main program',
          currency: null,
          terms: { commission_type: 'percent', commission_value: '20', click_window_days: 45 },
        },
        {
          source_id: 'resellers/sale',
          name: 'Resellers (Sale)',
          currency: 'EUR',
          terms: {
            commission_type: 'flat',
            commission_value: '12.50',
            click_window_days: 90,
            commission_max_conversions: 1,
          },
        },
        {
          source_id: 'resellers/upsell',
          name: 'Resellers (Upsell)',
          currency: null,
          terms: {
            commission_type: 'percent',
            commission_value: '7.5',
            click_window_days: 90,
            commission_max_conversions: 1,
          },
        },
      ]);
      expect(other.requests.map((r) => r.path)).toEqual(
        expect.arrayContaining(['/1.6/programs/resellers/commission-types/', '/1.6/programs/main/commission-types/']),
      );
    } finally {
      await other.close();
    }
  });

  it('a dry run lists where they differ; a real run without a choice fails, writing nothing', async () => {
    const m = await merchant();
    const before = await program(m);
    const dry = await runImport(m.api, m.programId, 'tapfiliate', { api_key: KEY }, true);
    expect(dry.status, dry.error).toBe('succeeded');
    expect(dry.terms).toMatchObject({ read: true, campaigns: 1, applied: null });
    expect(dry.terms.differences).toEqual([
      { campaign: 'Main program', field: 'commission_value', source: '20', program: String(before.commission_value) },
      {
        campaign: 'Main program',
        field: 'click_window_days',
        source: '45',
        program: String(before.click_window_days),
      },
    ]);

    const failed = await finished(m.api, (await start(m)).body.data.import.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(
      /^The campaign terms at tapfiliate differ from the program's: commission_value 20 at tapfiliate \(Main program\), 30 here;/,
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
    expect(await program(m)).toMatchObject({ commission_type: 'percent', commission_value: 20, click_window_days: 45 });
    await new Promise((r) => setTimeout(r, 300));
    expect(await sale('after-import')).toBe(20);
  });
});
