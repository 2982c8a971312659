import { describe, expect, it } from 'vitest';
import {
  approved,
  effectiveStatus,
  refundEffect,
  rejected,
  type LedgerEntryState,
} from '../../server/src/modules/commissions/commission-lifecycle.js';

const now = new Date('2026-11-24T12:00:00Z');
const entry = (over: Partial<LedgerEntryState> = {}): LedgerEntryState => ({
  status: 'pending',
  amount: '30',
  payoutId: null,
  approvesAt: new Date('2026-12-01T00:00:00Z'),
  ...over,
});

describe('commission lifecycle', () => {
  it('a pending entry is approved once approves_at has passed, not before, and never without approves_at', () => {
    expect(effectiveStatus(entry(), now)).toBe('pending');
    expect(effectiveStatus(entry({ approvesAt: now }), now)).toBe('approved');
    expect(effectiveStatus(entry({ approvesAt: null }), new Date('2030-01-01'))).toBe('pending');
    expect(effectiveStatus(entry({ status: 'on_hold', approvesAt: now }), now)).toBe('on_hold');
  });

  it('approve: pending and on_hold approve, a repeat changes nothing, the rest is a conflict', () => {
    expect(approved(entry(), now)).toEqual({ status: 'approved', changed: true });
    expect(approved(entry({ status: 'on_hold' }), now)).toEqual({ status: 'approved', changed: true });
    expect(approved(entry({ status: 'approved' }), now)).toEqual({ status: 'approved', changed: false });
    // Approved by the passing of time but still stored pending: storing it approved is a change.
    expect(approved(entry({ approvesAt: now }), now)).toEqual({ status: 'approved', changed: true });
    for (const status of ['paid', 'reversed', 'rejected'] as const)
      expect(() => approved(entry({ status }), now)).toThrow(`A ${status} commission cannot be approved`);
  });

  it('reject: never an entry a payout carries, nor a paid or reversed one; a repeat changes nothing', () => {
    expect(rejected(entry(), now)).toEqual({ status: 'rejected', changed: true });
    expect(rejected(entry({ status: 'on_hold' }), now)).toEqual({ status: 'rejected', changed: true });
    expect(rejected(entry({ status: 'rejected' }), now)).toEqual({ status: 'rejected', changed: false });
    expect(() => rejected(entry({ status: 'approved', payoutId: 'p1' }), now)).toThrow(/in a payout/);
    expect(() => rejected(entry({ status: 'paid', payoutId: 'p1' }), now)).toThrow(/in a payout/);
    expect(() => rejected(entry({ status: 'reversed' }), now)).toThrow('A reversed commission cannot be rejected');
  });

  it('a refund before payment reduces the entry, or reverses it when the whole charge is refunded', () => {
    expect(refundEffect(entry(), '30', '18')).toEqual({ kind: 'reduce', amount: '18' });
    expect(refundEffect(entry({ status: 'approved', amount: '18' }), '18', '0')).toEqual({ kind: 'reverse' });
    expect(refundEffect(entry({ status: 'on_hold' }), '30', '0')).toEqual({ kind: 'reverse' });
  });

  it('a refund after a canceled payout released an entry with a clawback reduces by the difference, never below what the clawback took', () => {
    // 30 earned; refunded down to 18 while in a payout (clawback -12); the payout canceled: entry 30 + clawback -12.
    // Refunded down to 6: the entry owes 12 less (18), so entry + clawback = 6.
    expect(refundEffect(entry({ amount: '30' }), '18', '6')).toEqual({ kind: 'reduce', amount: '18' });
    // Then all refunded: the entry owes 6 less (12), netting the clawback's -12 to 0.
    expect(refundEffect(entry({ amount: '18' }), '6', '0')).toEqual({ kind: 'reduce', amount: '12' });
  });

  it('a refund after the entry went into a payout (pending or paid) leaves it whole and claws back the difference', () => {
    expect(refundEffect(entry({ status: 'paid', payoutId: 'p1' }), '30', '18')).toEqual({
      kind: 'clawback',
      amount: '-12',
    });
    expect(refundEffect(entry({ status: 'approved', payoutId: 'p1' }), '18', '0')).toEqual({
      kind: 'clawback',
      amount: '-18',
    });
  });

  it('nothing changes for a rejected or reversed entry, or when the commission did not move', () => {
    expect(refundEffect(entry({ status: 'rejected' }), '30', '0')).toEqual({ kind: 'none' });
    expect(refundEffect(entry({ status: 'reversed' }), '30', '0')).toEqual({ kind: 'none' });
    expect(refundEffect(entry({ status: 'paid', payoutId: 'p1' }), '30', '30')).toEqual({ kind: 'none' });
  });
});
