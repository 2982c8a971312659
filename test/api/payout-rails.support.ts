import { afterAll, beforeAll, expect } from 'vitest';
import { Db } from '../../server/src/db/sql.js';
import { createMerchant, request } from '../support/api.js';
import { testServer } from '../support/server.js';
import { sql } from 'kysely';

export type Merchant = Awaited<ReturnType<typeof createMerchant>>;

/** A merchant whose affiliate is paid by `method`, with approved commissions gathered into one pending payout of `amount`. */
export async function merchantWithPendingPayout(
  method: 'paypal' | 'stripe' | 'wise' | 'manual',
  amount = 42.5,
  affiliate: Record<string, unknown> = {},
) {
  const m = await createMerchant({ currency: 'USD' });
  const patch = await m.api.patch(`/api/affiliates/${m.affiliate.id}`, {
    payout_method: method,
    name: 'Jane Doe',
    ...affiliate,
  });
  expect(patch.status, JSON.stringify(patch.body)).toBe(200);
  const payout = await pendingPayout(m, amount);
  return { m, payout };
}

/** An approved adjustment of `amount` for the merchant's affiliate, gathered into a new pending payout. */
export async function pendingPayout(m: Merchant, amount: number) {
  const c = await m.api.post('/api/commissions', { affiliate_id: m.affiliate.id, amount, description: 'earned' });
  expect(c.status, JSON.stringify(c.body)).toBe(201);
  const created = await m.api.post('/api/payouts', {});
  expect(created.status).toBe(201);
  expect(created.body.data.payouts).toHaveLength(1);
  return created.body.data.payouts[0];
}

export async function payout(m: Merchant, id: string) {
  const res = await m.api.get(`/api/payouts/${id}`);
  expect(res.status).toBe(200);
  return res.body.data.payout;
}

/** The statuses of the payout's commissions, as the API lists them for the affiliate. */
export async function commissionStatuses(m: Merchant) {
  const res = await m.api.get(`/api/commissions?affiliate_id=${m.affiliate.id}`);
  expect(res.status).toBe(200);
  return res.body.data.commissions.map((c: { status: string; payout_id: string | null }) => ({
    status: c.status,
    payout_id: c.payout_id,
  }));
}

/** The sends this instance started, finished. */
export async function sendsSettled() {
  await (await testServer()).services.payoutSender.idle();
}

export async function reconcileNow() {
  return (await testServer()).services.payoutSender.reconcile(new Date(Date.now() + 1000));
}

/** The outbox's events of a type for the organization (written only for subscribed types). */
export async function outboxEvents(organizationId: string, type: string) {
  const { db } = await testServer();
  return Db.of(db.orm).rows(
    sql<{
      resource: any;
    }>`select resource from outbound_events where organization_id = ${organizationId} and type = ${type} order by created_at`,
  );
}

export const postWebhook = (path: string, body: string, headers: Record<string, string>) =>
  request('POST', path, { rawBody: body, headers });

/**
 * For the tests of one file: starts its stand-ins, points the settings it answers at them (e.g.
 * `STRIPE_API_BASE_URL`), and afterwards puts every setting back as it was and stops them.
 */
export function settingsForFile(start: () => Promise<Record<string, string>>, stop: () => Promise<void>): void {
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    for (const [name, value] of Object.entries(await start())) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await stop();
  });
}
