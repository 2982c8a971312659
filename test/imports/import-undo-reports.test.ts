import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportsRepository } from '../../server/src/modules/reports/reports.repository.js';
import { createOrganization, type Api } from '../support/api.js';
import { testServer } from '../support/server.js';
import { startRewardfulStandin, type Standin } from './rewardful-standin.js';

/**
 * Undoing an import takes its rows out of the reports: the summaries the background fold has
 * already folded them into (report_affiliate_totals / _days, report_program_days) and the deltas
 * not folded yet (a held entry's scheduled approval) lose exactly what the deleted rows contributed, so every report reads as before the import,
 * the merchant's own activity in the same program and period still counted.
 */
const SECRET = 'rw-undo-reports';
const A1 = 'aff-undo-1';
const A2 = 'aff-undo-2';
const MARCH = '2024-03-01T12:00:00.000Z';

const sale = (
  id: string,
  cents: number,
  refundCents: number,
  currency: string,
  customer: string,
  affiliateId: string,
) => ({
  id: `sale-${id}`,
  currency,
  charged_at: MARCH,
  stripe_charge_id: `ch_${id}`,
  created_at: MARCH,
  updated_at: MARCH,
  charge_amount_cents: cents,
  refund_amount_cents: refundCents,
  tax_amount_cents: 0,
  sale_amount_cents: cents,
  referral: {
    id: `ref-${customer}`,
    stripe_customer_id: customer,
    conversion_state: 'conversion',
    customer: { platform: 'stripe', id: customer, name: 'Cus', email: `${customer}@example.com` },
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
  refundCents = 0,
) => ({
  id,
  created_at: MARCH,
  updated_at: MARCH,
  amount: cents,
  currency,
  state,
  due_at: dueAt,
  paid_at: state === 'paid' ? '2024-04-05T00:00:00.000Z' : null,
  voided_at: state === 'voided' ? '2024-03-10T00:00:00.000Z' : null,
  campaign: { id: 'camp-1', name: 'Main' },
  sale: sale(id, cents * 7 + 3, refundCents, currency, customer, affiliateId),
});
const affiliate = (id: string, email: string, first: string) => ({
  id,
  created_at: '2024-01-02T10:00:00.000Z',
  updated_at: '2024-01-02T10:00:00.000Z',
  first_name: first,
  last_name: 'Example',
  email,
  paypal_email: null,
  state: 'active',
  visitors: 0,
  leads: 0,
  conversions: 0,
  campaign: { id: 'camp-1', name: 'Main' },
  links: [
    {
      id: `${id}-link`,
      url: `https://example.com/?via=${first.toLowerCase()}`,
      token: `${first.toLowerCase()}-undo`,
      visitors: 0,
      leads: 0,
      conversions: 0,
    },
  ],
});

const DATA = {
  affiliates: [affiliate(A1, 'ann-undo@example.com', 'Ann'), affiliate(A2, 'ben-undo@example.com', 'Ben')],
  referrals: [
    {
      id: 'ref-u1',
      affiliate: { id: A1 },
      customer: { platform: 'stripe', id: 'cus_u1', name: 'One', email: 'u1@example.com' },
      stripe_customer_id: 'cus_u1',
      conversion_state: 'conversion',
    },
    {
      id: 'ref-u2',
      affiliate: { id: A2 },
      customer: { platform: 'stripe', id: 'cus_u2', name: 'Two', email: 'u2@example.com' },
      stripe_customer_id: 'cus_u2',
      conversion_state: 'conversion',
    },
  ],
  payouts: [
    {
      id: 'pay-u1',
      currency: 'USD',
      paid_at: '2024-04-05T00:00:00.000Z',
      state: 'paid',
      amount: 2501,
      affiliate: { id: A1 },
      commissions: [{ id: 'com-u-paid', currency: 'USD' }],
    },
  ],
  commissions: [
    // Pending with a hold far ahead: its scheduled approval stays in report_deltas, not due.
    commission('com-u-pending', 'pending', 1234, 'EUR', A1, 'cus_u1', '2099-01-01T00:00:00.000Z'),
    commission('com-u-paid', 'paid', 2501, 'USD', A1, 'cus_u1', '2024-03-31T00:00:00.000Z', 999),
    commission('com-u-due', 'due', 1003, 'USD', A2, 'cus_u2', '2024-03-31T00:00:00.000Z'),
    commission('com-u-void', 'voided', 707, 'USD', A2, 'cus_u2', '2024-03-31T00:00:00.000Z', 4952),
  ],
};

/** The same without the entry in its hold: no scheduled approval. */
const SETTLED = { ...DATA, commissions: DATA.commissions.filter((c) => c.state !== 'pending') };

let full: Standin;
let settled: Standin;
beforeAll(async () => {
  full = await startRewardfulStandin(SECRET, DATA);
  settled = await startRewardfulStandin(SECRET, SETTLED);
});
afterAll(async () => {
  delete process.env.IMPORT_REWARDFUL_API_BASE_URL;
  await full.close();
  await settled.close();
});

async function finished(api: Api, id: string) {
  for (let i = 0; i < 300; i++) {
    const res = await api.get(`/api/imports/${id}`);
    expect(res.status).toBe(200);
    if (res.body.data.import.status !== 'running') return res.body.data.import;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('import still running after 30 s');
}

/** Folds the organization's deltas into its summaries, as the background folder would within seconds. */
async function foldAll(organizationId: string): Promise<void> {
  await new ReportsRepository((await testServer()).db.orm).fold(organizationId);
}

const TO = new Date(Date.now() + 2 * 86_400_000).toISOString();
/** Every report the merchant can read over the imported history, aligned to the summaries' days and months and not. */
async function reports(api: Api, programId: string) {
  const paths = [
    `/api/reports/affiliates?from=2024-01-01T00:00:00Z&to=${TO}&limit=100`,
    `/api/reports/affiliates?from=2024-02-14T06:30:00Z&to=2024-03-01T18:00:00Z&limit=100`,
    `/api/reports/affiliates?from=2024-03-01T00:00:00Z&to=2024-03-02T00:00:00Z&program_id=${programId}&currency=USD&limit=100`,
    `/api/reports/timeseries?from=2024-01-01T00:00:00Z&to=${TO}&interval=month`,
    `/api/reports/timeseries?from=2024-02-25T00:00:00Z&to=2024-03-05T00:00:00Z&interval=day`,
    `/api/reports/timeseries?from=2024-02-26T13:00:00Z&to=2024-03-01T12:30:00Z&interval=week&program_id=${programId}`,
  ];
  const out: Record<string, unknown> = {};
  for (const path of paths) {
    const res = await api.get(path);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
    out[path] = res.body.data;
  }
  return out;
}

/**
 * The merchant's own activity in the same program, on the imported sales' day (a partner, a click, a
 * customer, a sale refunded in part), folded; then the import, folded; then the undo. With
 * `partnersHere`, the source's partners are already partners here (matched by e-mail, not deleted by
 * the undo): the imported history lands on them, the own activity on the first.
 */
async function undoAfterFold(standin: Standin, partnersHere: boolean, whileFolding = false) {
  process.env.IMPORT_REWARDFUL_API_BASE_URL = standin.url;
  const org = await createOrganization();
  const program = await org.api.post('/api/programs', { name: 'Main', commission_value: 30 });
  expect(program.status).toBe(201);
  const programId = program.body.data.program.id as string;

  const own = await org.api.post('/api/affiliates', {
    email: partnersHere ? 'ann-undo@example.com' : 'own-undo@example.com',
    program_id: programId,
  });
  expect(own.status, JSON.stringify(own.body)).toBe(201);
  if (partnersHere)
    expect(
      (await org.api.post('/api/affiliates', { email: 'ben-undo@example.com', program_id: programId })).status,
    ).toBe(201);
  const slug = own.body.data.affiliate.slug as string;
  expect((await org.api.post('/api/clicks', { ref: slug })).status).toBe(201);
  expect((await org.api.post('/api/customers', { customer_id: 'cus_own_undo', ref: slug })).status).toBe(201);
  const conversion = await org.api.post('/api/conversions', {
    external_id: 'own-undo-1',
    amount: 123.45,
    currency: 'USD',
    customer_id: 'cus_own_undo',
    occurred_at: MARCH,
  });
  expect(conversion.status, JSON.stringify(conversion.body)).toBe(201);
  const refund = await org.api.post(`/api/conversions/${conversion.body.data.conversion.id}/refund`, { amount: 23.4 });
  expect(refund.status, JSON.stringify(refund.body)).toBe(200);
  await foldAll(org.id);
  const before = await reports(org.api, programId);
  const ownRow = (
    before[`/api/reports/affiliates?from=2024-01-01T00:00:00Z&to=${TO}&limit=100`] as {
      affiliates: Record<string, unknown>[];
    }
  ).affiliates;
  expect(ownRow).toEqual([
    expect.objectContaining({
      affiliate_id: own.body.data.affiliate.id,
      clicks: 1,
      customers: 1,
      conversions: 1,
      revenue: 123.45,
      refunded: 23.4,
    }),
  ]);

  const started = await org.api.post('/api/imports', {
    source: 'rewardful',
    credentials: { api_secret: SECRET },
    program_id: programId,
  });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  const done = await finished(org.api, started.body.data.import.id);
  expect(done.status, done.error).toBe('succeeded');
  await foldAll(org.id);
  const imported = await reports(org.api, programId);
  // The import shows in every report (so that the comparison after the undo means something).
  for (const path of Object.keys(before)) expect(imported[path], path).not.toEqual(before[path]);

  let undone;
  if (whileFolding) {
    // A fold of the organization in progress (its row of report_totals_through locked by another
    // connection): the undo, which folds the organization before deleting, waits for it to end.
    const folding = new pg.Client({ connectionString: (await testServer()).db.url });
    await folding.connect();
    try {
      await folding.query('begin');
      await folding.query('select 1 from report_totals_through where organization_id = $1 for update', [org.id]);
      let settled = false;
      const pending = org.api.delete(`/api/imports/${done.id}`).finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 1_000));
      expect(settled).toBe(false);
      await folding.query('commit');
      undone = await pending;
    } finally {
      await folding.end();
    }
  } else undone = await org.api.delete(`/api/imports/${done.id}`);
  expect(undone.status, JSON.stringify(undone.body)).toBe(200);
  expect(await reports(org.api, programId)).toEqual(before);
  // And the next fold changes nothing.
  await foldAll(org.id);
  expect(await reports(org.api, programId)).toEqual(before);
}

describe('undoing an import', () => {
  it(
    'takes its figures out of the reports already folded, and keeps the rest of the program counted',
    { timeout: 120_000 },
    async () => {
      await undoAfterFold(full, false);
    },
  );

  it(
    'takes them off partners that were already here, who stay, with their own activity counted',
    { timeout: 120_000 },
    async () => {
      await undoAfterFold(settled, true);
    },
  );

  it(
    'waits for a fold of the organization in progress (it folds the organization itself), then reads as before',
    { timeout: 120_000 },
    async (ctx) => {
      if ((await testServer()).db.embedded) ctx.skip(); // one connection: no second one can hold the lock
      await undoAfterFold(settled, true, true);
    },
  );
});
