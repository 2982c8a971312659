import { beforeAll, describe, expect, it } from 'vitest';
import { IMPORTS_ACCESS, PAYOUT_SENDING_ACCESS } from '@affiliate-attribution/contract';
import { accessService, affiliatesCsv, importSettled, stateOf, team } from './support/access.js';
import { call, session, type PeopleServer } from './support/people.js';

/**
 * Connecting a payout rail is an owner's; spending through it must be too. A member who makes an
 * affiliate of their own (with their own PayPal e-mail), gives it a commission and gathers a payout
 * (all of which a member may do) cannot send it, nor retry a failed payout: the merchant's PayPal
 * (a stand-in speaking PayPal Payouts v1) is never called. Nor can a member start or undo an
 * import. An owner's session and the organization's live key still do all of it.
 */
// Payouts are sent through PayPal: its stand-in counts what reached it.
const started = accessService();
const { paypal } = started;
let service: PeopleServer;
let base: string;
beforeAll(() => {
  ({ service, base } = started);
});

const cannotSend = { success: false, message: PAYOUT_SENDING_ACCESS.ownerOnly };
const cannotImport = { success: false, message: IMPORTS_ACCESS.ownerOnly };

describe('spending and importing, by role', () => {
  it('a member cannot pay themselves: their own affiliate, commission and payout are theirs to make, sending and retrying are not', async () => {
    const t = await team(service, paypal);
    const member = session(base, t.member.cookie);
    // What a member may do: a program, an affiliate paid to their own PayPal, a commission, a payout.
    const program = await call(base, 'POST', '/api/programs', {
      headers: member,
      body: { name: 'Friends', commission_value: 50, currency: 'USD' },
    });
    expect(program.status, JSON.stringify(program.body)).toBe(201);
    const programId = program.body.data.program.id;
    const mine = await call(base, 'POST', '/api/affiliates', {
      headers: member,
      body: { email: 'me-again@member.example', program_id: programId, name: 'Max Again' },
    });
    expect(mine.status, JSON.stringify(mine.body)).toBe(201);
    const affiliateId = mine.body.data.affiliate.id;
    expect(
      (
        await call(base, 'PATCH', `/api/affiliates/${affiliateId}`, {
          headers: member,
          body: { payout_method: 'paypal', payout_email: t.member.email },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call(base, 'POST', '/api/commissions', {
          headers: member,
          body: { affiliate_id: affiliateId, amount: 5000, description: 'bonus' },
        })
      ).status,
    ).toBe(201);
    const gathered = await call(base, 'POST', '/api/payouts', { headers: member, body: { program_id: programId } });
    expect(gathered.status, JSON.stringify(gathered.body)).toBe(201);
    const own = gathered.body.data.payouts.find((p: { affiliate_id: string }) => p.affiliate_id === affiliateId);
    expect(own).toMatchObject({ status: 'pending', amount: 5000 });
    const before = await stateOf(base, t, paypal);

    // Sending it, every pending payout, the team's pending payout, retrying the failed one: refused.
    for (const body of [{ payout_ids: [own.id] }, {}, { program_id: programId }, { payout_ids: [t.payouts.pending] }]) {
      const sent = await call(base, 'POST', '/api/payouts/send', { headers: member, body });
      expect([sent.status, sent.body], JSON.stringify(body)).toEqual([403, cannotSend]);
    }
    const retried = await call(base, 'POST', `/api/payouts/${t.payouts.failed}/retry`, { headers: member, body: {} });
    expect([retried.status, retried.body]).toEqual([403, cannotSend]);
    // In test mode too (the dashboard's switch is a view, not a credential).
    const testMode = await call(base, 'POST', '/api/payouts/send', {
      headers: { ...member, 'x-mode': 'test' },
      body: {},
    });
    expect([testMode.status, testMode.body]).toEqual([403, cannotSend]);

    // Nothing reached PayPal; every payout is as it was.
    expect(await stateOf(base, t, paypal)).toEqual(before);
    expect(paypal.createRequests.some((r) => JSON.stringify(r).includes(t.member.email))).toBe(false);

    // The owner sends; the organization's live key retries.
    const sentByOwner = await call(base, 'POST', '/api/payouts/send', {
      headers: session(base, t.owner.cookie),
      body: { payout_ids: [own.id, t.payouts.pending] },
    });
    expect(sentByOwner.status, JSON.stringify(sentByOwner.body)).toBe(202);
    expect(sentByOwner.body.data.payouts.map((p: { status: string }) => p.status)).toEqual([
      'processing',
      'processing',
    ]);
    const retriedByKey = await call(base, 'POST', `/api/payouts/${t.payouts.failed}/retry`, {
      headers: { authorization: `Bearer ${t.owner.apiKey}` },
      body: {},
    });
    expect(retriedByKey.status, JSON.stringify(retriedByKey.body)).toBe(202);
    expect(retriedByKey.body.data.payout).toMatchObject({ status: 'processing', method: 'paypal' });
    expect(paypal.createRequests.length).toBeGreaterThan(before.paypalBatches);
  }, 120_000);

  it('a member can neither start nor undo an import, nor read them; the owner and the live key can', async () => {
    const t = await team(service, paypal);
    const member = session(base, t.member.cookie);
    const before = await stateOf(base, t, paypal);
    const body = {
      source: 'csv',
      credentials: { affiliates_csv: affiliatesCsv('by-member') },
      program_id: t.programId,
      dry_run: false,
    };
    const started = await call(base, 'POST', '/api/imports', { headers: member, body });
    expect([started.status, started.body]).toEqual([403, cannotImport]);
    const undone = await call(base, 'DELETE', `/api/imports/${t.importId}`, { headers: member });
    expect([undone.status, undone.body]).toEqual([403, cannotImport]);
    for (const path of ['/api/imports', `/api/imports/${t.importId}`]) {
      const read = await call(base, 'GET', path, { headers: member });
      expect([read.status, read.body]).toEqual([403, cannotImport]);
    }
    // No import started, the finished one (and the affiliates it brought) still there.
    expect(await stateOf(base, t, paypal)).toEqual(before);

    const live = { authorization: `Bearer ${t.owner.apiKey}` };
    const byOwner = await call(base, 'POST', '/api/imports', { headers: session(base, t.owner.cookie), body });
    expect(byOwner.status, JSON.stringify(byOwner.body)).toBe(202);
    await importSettled(base, t.owner.apiKey, byOwner.body.data.import.id);
    const undoneByKey = await call(base, 'DELETE', `/api/imports/${t.importId}`, { headers: live });
    expect(undoneByKey.status, JSON.stringify(undoneByKey.body)).toBe(200);
    const undoneByOwner = await call(base, 'DELETE', `/api/imports/${byOwner.body.data.import.id}`, {
      headers: session(base, t.owner.cookie),
    });
    expect(undoneByOwner.status, JSON.stringify(undoneByOwner.body)).toBe(200);
    expect((await stateOf(base, t, paypal)).affiliates.length).toBe(before.affiliates.length - 1);
  }, 120_000);
});
