import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchant, runImport } from './import-helpers.js';
import { Db } from '../../server/src/db/sql.js';
import { testServer } from '../support/server.js';
import { startRewardfulStandin, type Standin } from './rewardful-standin.js';
import { sql } from 'kysely';

/**
 * Imported history keeps its source's dates: a partner who joined in June, June signups and June
 * sales are June in the customers, commissions and affiliates lists (what the portal lists by:
 * partner-figures.ts reads created_at), and in the reports the Overview reads (GET
 * /api/reports/timeseries), also once the report fold's watermark has passed June; a lead who never
 * paid stays a signup (`trial`), a paying one is `active` with `first_conversion_at` from the import.
 * Objects as Rewardful documents them (https://developers.rewardful.com/rest-api/referrals/object:
 * `became_lead_at`; affiliates/object and commissions/object: `created_at`).
 */
const SECRET = 'rw-dates';
const affiliate = {
  id: 'aff-june',
  email: 'june@example.com',
  first_name: 'June',
  last_name: 'P',
  state: 'active',
  created_at: '2024-06-01T09:00:00.000Z',
  links: [{ id: 'l1', token: 'june' }],
};
const referral = (customer: string, state: string, leadAt: string) => ({
  id: `ref-${customer}`,
  affiliate: { id: 'aff-june' },
  customer: { platform: 'stripe', id: customer, name: null, email: null },
  stripe_customer_id: customer,
  conversion_state: state,
  created_at: '2024-06-02T00:00:00.000Z',
  became_lead_at: leadAt,
});
const commission = {
  id: 'com-june',
  created_at: '2024-06-15T12:00:05.000Z',
  amount: 900,
  currency: 'USD',
  state: 'due',
  due_at: '2024-07-15T00:00:00.000Z',
  paid_at: null,
  sale: {
    id: 'sale-june',
    currency: 'USD',
    charged_at: '2024-06-15T12:00:00.000Z',
    charge_amount_cents: 3000,
    refund_amount_cents: 0,
    tax_amount_cents: 0,
    sale_amount_cents: 3000,
    referral: referral('cus_paid', 'conversion', '2024-06-03T10:00:00.000Z'),
  },
};

let standin: Standin;
beforeAll(async () => {
  standin = await startRewardfulStandin(SECRET, {
    affiliates: [affiliate],
    referrals: [
      referral('cus_paid', 'conversion', '2024-06-03T10:00:00.000Z'),
      referral('cus_lead', 'lead', '2024-06-05T10:00:00.000Z'),
    ],
    payouts: [],
    commissions: [commission],
  });
  process.env.IMPORT_REWARDFUL_API_BASE_URL = standin.url;
});
afterAll(async () => {
  delete process.env.IMPORT_REWARDFUL_API_BASE_URL;
  await standin.close();
});

/** Folds the report summaries up to now: the watermark passes June (and the import's own time). */
async function fold(db: Db) {
  await db.rows(sql`select report_fold(interval '0 seconds', interval '100 years')`);
}

describe('imported history keeps its dates', () => {
  it('June history is June in the lists and the reports, not today; a lead stays a signup', async () => {
    const db = Db.of((await testServer()).db.orm);
    const m = await merchant();
    await fold(db);
    const done = await runImport(m.api, m.programId, 'rewardful', { api_secret: SECRET });
    expect(done.status, done.error).toBe('succeeded');
    await fold(db);

    const [june] = (await m.api.get('/api/affiliates')).body.data.affiliates;
    expect(june.created_at).toBe('2024-06-01T09:00:00.000Z');
    const customers = {
      cus_paid: (await m.api.get('/api/customers/cus_paid')).body.data.customer,
      cus_lead: (await m.api.get('/api/customers/cus_lead')).body.data.customer,
    };
    expect(customers.cus_paid).toMatchObject({
      status: 'active',
      created_at: '2024-06-03T10:00:00.000Z',
      first_conversion_at: '2024-06-15T12:00:00.000Z',
    });
    expect(customers.cus_lead).toMatchObject({
      status: 'trial',
      created_at: '2024-06-05T10:00:00.000Z',
      first_conversion_at: null,
    });
    const [entry] = (await m.api.get('/api/commissions')).body.data.commissions;
    expect(entry.created_at).toBe('2024-06-15T12:00:05.000Z');

    const series = async (from: string, to: string) =>
      (await m.api.get(`/api/reports/timeseries?from=${from}&to=${to}&interval=month&currency=USD`)).body.data;
    const juneReport = await series('2024-06-01T00:00:00Z', '2024-07-01T00:00:00Z');
    expect(juneReport.totals[0]).toMatchObject({ customers: 2, conversions: 1, revenue: 30 });
    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const thisMonth = await series(monthStart.toISOString(), next.toISOString());
    expect(thisMonth.totals[0] ?? { customers: 0, conversions: 0 }).toMatchObject({ customers: 0, conversions: 0 });

    // Undone, the June figures go with it (the summaries held them).
    expect((await m.api.delete(`/api/imports/${done.id}`)).status).toBe(200);
    const after = await series('2024-06-01T00:00:00Z', '2024-07-01T00:00:00Z');
    expect(after.totals[0] ?? { customers: 0, conversions: 0 }).toMatchObject({ customers: 0, conversions: 0 });
  });
});
