import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchant, runImport } from './import-helpers.js';
import { expectError } from '../support/api.js';
import { startRewardfulStandin, type Standin } from './rewardful-standin.js';

/**
 * An import's own record keeps telling the truth: a rerun counts the conversions it finds as
 * "already here"; a source that cannot be reached at all fails the import at once, saying where it
 * looked; an undone import stays listed, `undone`, with what it had done.
 * Stand-in: Rewardful's documented API (rewardful-standin.ts).
 */
const SECRET = 'rw-bookkeeping';
const sale = (id: string, customer: string) => ({
  id: `sale-${id}`,
  currency: 'USD',
  charged_at: '2024-06-10T12:00:00.000Z',
  charge_amount_cents: 5000,
  refund_amount_cents: 0,
  tax_amount_cents: 0,
  sale_amount_cents: 5000,
  referral: {
    id: `ref-${customer}`,
    stripe_customer_id: customer,
    conversion_state: 'conversion',
    customer: { platform: 'stripe', id: customer, name: null, email: null },
    affiliate: { id: 'aff-1' },
  },
});
const commission = (id: string, customer: string) => ({
  id,
  created_at: '2024-06-10T12:00:00.000Z',
  amount: 1000,
  currency: 'USD',
  state: 'due',
  due_at: '2024-07-10T00:00:00.000Z',
  paid_at: null,
  sale: sale(id, customer),
});

let standin: Standin;
beforeAll(async () => {
  standin = await startRewardfulStandin(SECRET, {
    affiliates: [
      { id: 'aff-1', email: 'kim@example.com', first_name: 'Kim', state: 'active', links: [{ id: 'l', token: 'kim' }] },
    ],
    referrals: [],
    payouts: [],
    commissions: [commission('c1', 'cus_1'), commission('c2', 'cus_2'), commission('c3', 'cus_1')],
  });
  process.env.IMPORT_REWARDFUL_API_BASE_URL = standin.url;
});
afterAll(async () => {
  delete process.env.IMPORT_REWARDFUL_API_BASE_URL;
  await standin.close();
});

describe('import bookkeeping', () => {
  it('a rerun reports the conversions it finds as already here', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, 'rewardful', { api_secret: SECRET });
    expect(done.counts.conversions).toEqual({ created: 3, already_present: 0, skipped: 0 });
    const again = await runImport(m.api, m.programId, 'rewardful', { api_secret: SECRET });
    expect(again.counts.conversions).toEqual({ created: 0, already_present: 3, skipped: 0 });
    expect(again.counts.commissions).toEqual({ created: 0, already_present: 3, skipped: 0 });
  });

  it('a source that cannot be reached fails the import at once, saying where it looked', async () => {
    const m = await merchant();
    const saved = process.env.IMPORT_REWARDFUL_API_BASE_URL;
    // A port nothing listens on (one just let go): the connection is refused.
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const { port } = free.address() as AddressInfo;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    process.env.IMPORT_REWARDFUL_API_BASE_URL = `http://127.0.0.1:${port}/v1`;
    try {
      const started = Date.now();
      const done = await runImport(m.api, m.programId, 'rewardful', { api_secret: SECRET });
      expect(done.status).toBe('failed');
      expect(done.error).toBe(
        `Rewardful refused the connection at http://127.0.0.1:${port}/v1. Nothing was imported: check that this server can reach it (IMPORT_REWARDFUL_API_BASE_URL), then start the import again.`,
      );
      expect(done.progress.retry).toBeNull();
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      process.env.IMPORT_REWARDFUL_API_BASE_URL = saved;
    }
  });

  it('an undone import stays listed, undone, with what it had done; a second undo is refused', async () => {
    const m = await merchant();
    const done = await runImport(m.api, m.programId, 'rewardful', { api_secret: SECRET });
    const undone = await m.api.delete(`/api/imports/${done.id}`);
    expect(undone.status, JSON.stringify(undone.body)).toBe(200);
    expect(undone.body.data.import).toMatchObject({ status: 'undone', counts: done.counts });
    expect(undone.body.data.import.undone_at).toEqual(expect.any(String));
    const listed = (await m.api.get('/api/imports')).body.data.imports;
    expect(listed.map((i: any) => [i.id, i.status])).toEqual([[done.id, 'undone']]);
    expect((await m.api.get('/api/conversions')).body.data.conversions).toEqual([]);
    expectError(await m.api.delete(`/api/imports/${done.id}`), 409, 'The import was already undone');
    // Imported again, it is all created again.
    const again = await runImport(m.api, m.programId, 'rewardful', { api_secret: SECRET });
    expect(again.counts.conversions.created).toBe(3);
  });
});
