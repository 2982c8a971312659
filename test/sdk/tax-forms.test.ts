import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../client-sdk/src/index.js';
import { partnerSession } from '../support/partner-session.js';
import { rejection } from '../support/rejection.js';
import { sdkMerchant } from './support.js';

describe('SDK against the live server: tax forms', () => {
  it('reads the form and the hold, rejects and accepts it; a payout run says what it held', async () => {
    const { client, affiliate, id } = await sdkMerchant({ require_tax_form: true });
    await client.commissions.adjust({ affiliate_id: affiliate.id, amount: 15, description: 'bonus' });
    expect(await client.payouts.create()).toEqual({
      payouts: [],
      held: [
        expect.objectContaining({
          affiliate_id: affiliate.id,
          amount: 15,
          reason: 'tax_form_missing',
          message: 'Payout held: tax form missing',
        }),
      ],
    });
    expect(await rejection(client.affiliates.acceptTaxForm(affiliate.id))).toBeInstanceOf(ConflictError);

    const partner = await partnerSession(id, affiliate.email);
    const pdf = Buffer.from('%PDF-1.7\nW-8BEN\n%%EOF\n').toString('base64');
    expect(
      (await partner.post('/partner/api/tax-form', { kind: 'w8ben', file_name: 'w8.pdf', content_base64: pdf })).status,
    ).toBe(201);
    expect(await client.affiliates.taxForm(affiliate.id)).toMatchObject({
      tax_form: { status: 'submitted', kind: 'w8ben' },
      payout_hold: { reason: 'tax_form_submitted' },
    });
    expect((await client.affiliates.rejectTaxForm(affiliate.id, 'Unsigned')).tax_form).toMatchObject({
      status: 'rejected',
      rejection_reason: 'Unsigned',
    });
    expect(await client.affiliates.acceptTaxForm(affiliate.id)).toMatchObject({
      tax_form: { status: 'accepted' },
      payout_hold: null,
    });
    const { payouts, held } = await client.payouts.create();
    expect(held).toEqual([]);
    expect(payouts).toEqual([expect.objectContaining({ affiliate_id: affiliate.id, amount: 15 })]);
  });
});
