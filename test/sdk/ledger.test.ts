import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../client-sdk/src/index.js';
import { sdkMerchant } from './support.js';
import { rejection } from '../support/rejection.js';

describe('SDK against the live server: commissions and payouts', () => {
  it('adjust, list with for await, approve/reject, then a payout marked paid', async () => {
    const { client, affiliate } = await sdkMerchant();
    await client.affiliates.update(affiliate.id, { payout_email: 'pay@example.com' });
    const { commission: bonus } = await client.commissions.adjust({
      affiliate_id: affiliate.id,
      amount: 20,
      description: 'launch bonus',
    });
    const { commission: mistake } = await client.commissions.adjust({
      affiliate_id: affiliate.id,
      amount: 5,
      description: 'typo',
    });
    expect(bonus).toMatchObject({ type: 'adjustment', status: 'approved', amount: 20 });
    const ids: string[] = [];
    for await (const c of client.commissions.list({ affiliate_id: affiliate.id, limit: 1 })) ids.push(c.id);
    expect(ids.sort()).toEqual([bonus.id, mistake.id].sort());
    expect((await client.commissions.reject(mistake.id, { reason: 'typo' })).commission).toMatchObject({
      status: 'rejected',
      rejection_reason: 'typo',
    });
    const err = await rejection(client.commissions.approve(mistake.id));
    expect(err).toBeInstanceOf(ConflictError);

    const { payouts } = await client.payouts.create();
    expect(payouts).toEqual([
      expect.objectContaining({ affiliate_id: affiliate.id, amount: 20, commission_count: 1, status: 'pending' }),
    ]);
    const { payout } = await client.payouts.markPaid(payouts[0].id, { reference: 'PP-1' });
    expect(payout).toMatchObject({ status: 'paid', reference: 'PP-1' });
    expect((await client.payouts.get(payout.id)).payout).toEqual(payout);
    expect((await client.commissions.get(bonus.id)).commission).toMatchObject({ status: 'paid', payout_id: payout.id });
    const listed = await client.payouts.list({ status: 'paid' });
    expect(listed.data.map((p) => p.id)).toEqual([payout.id]);
    expect(await rejection(client.payouts.cancel(payout.id))).toBeInstanceOf(ConflictError);
  });

  it("erases a partner's personal details, keeping the ledger", async () => {
    const { client, affiliate } = await sdkMerchant();
    const { commission } = await client.commissions.adjust({
      affiliate_id: affiliate.id,
      amount: 12,
      description: 'before erasure',
    });
    const { affiliate: erased } = await client.affiliates.erase(affiliate.id);
    expect(erased).toMatchObject({
      id: affiliate.id,
      email: `erased-${affiliate.id}@erased.invalid`,
      name: null,
      payout_email: null,
      status: 'disabled',
    });
    expect((await client.commissions.get(commission.id)).commission).toMatchObject({
      amount: 12,
      affiliate_id: affiliate.id,
    });
  });
});
