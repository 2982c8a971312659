import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { linkOnSite, maskCustomer, nextPayout, periodStarts } from '../../server/src/modules/partners/partner-views.js';

const ORG = '6b1f3c1e-7d4a-4e9b-8a61-2c5d9f0e4b7a';

describe('maskCustomer', () => {
  it('keeps the prefix and the last 4 characters of a provider id', () => {
    expect(maskCustomer(ORG, 'cus_Q8dXk2LmN94f2a')).toBe('cus_…4f2a');
    expect(maskCustomer(ORG, 'ctm_01hzx8p3v6k2q9w7e5r4t3y2u1')).toBe('ctm_…y2u1');
  });

  it('never shows any of an e-mail, or of an id too short to hide by cutting', () => {
    for (const id of ['alice@buyer.example', 'ALICE@BUYER.EXAMPLE', '12345', 'cus_abc', 'user 42 jane doe']) {
      const masked = maskCustomer(ORG, id);
      expect(masked).toMatch(/^(customer |[A-Za-z]{2,8}_)…[0-9a-f]{4}$/);
      expect(masked).not.toContain('@');
      expect(masked).not.toMatch(/alice|buyer|jane|abc|2345/i);
    }
  });

  it('gives the same customer the same mask, and depends on the organization', () => {
    expect(maskCustomer(ORG, 'alice@buyer.example')).toBe(maskCustomer(ORG, 'alice@buyer.example'));
    expect(maskCustomer(ORG, 'alice@buyer.example')).not.toBe(
      maskCustomer('00000000-0000-4000-8000-000000000000', 'alice@buyer.example'),
    );
  });
});

describe('linkOnSite', () => {
  const site = 'https://www.shop.example.com/';
  it('adds ref to a page of the site or a subdomain, keeping its query and fragment', () => {
    expect(linkOnSite(site, 'https://shop.example.com/pricing?plan=pro#faq', 'jane')).toBe(
      'https://shop.example.com/pricing?plan=pro&ref=jane#faq',
    );
    expect(linkOnSite(site, 'blog.shop.example.com/post', 'jane')).toBe('https://blog.shop.example.com/post?ref=jane');
    expect(linkOnSite(site, 'https://shop.example.com/?ref=someone-else', 'jane')).toBe(
      'https://shop.example.com/?ref=jane',
    );
  });

  it('refuses another host, a look-alike, credentials and other schemes', () => {
    for (const page of [
      'https://evil.example/shop.example.com',
      'https://shop.example.com.evil.example/',
      'https://notshop.example.com/',
      'javascript:alert(1)',
      'https://user:pw@shop.example.com/',
      'ftp://shop.example.com/',
    ]) {
      expect(linkOnSite(site, page, 'jane'), page).toBeUndefined();
    }
  });
});

describe('nextPayout', () => {
  const d = (v: number | string) => new Decimal(v);
  const at = (day: number) => new Date(Date.UTC(2026, 11, day));
  it('is due now when the approved balance reaches the minimum (and is above zero)', () => {
    expect(nextPayout(d(50), d(50), [])).toEqual({
      state: 'due',
      eligible: true,
      eligible_from: null,
      shortfall: d(0),
    });
    expect(nextPayout(d(0), d(0), []).eligible).toBe(false);
    expect(nextPayout(d('0.01'), d(0), []).eligible).toBe(true);
  });

  it('without a minimum and nothing to pay (all paid, or held for review), is short of nothing; below zero after a refund, of what brings it above', () => {
    expect(nextPayout(d(0), d(0), [])).toEqual({
      state: 'nothing_owed',
      eligible: false,
      eligible_from: null,
      shortfall: d(0),
    });
    expect(nextPayout(d(-20), d(0), [])).toMatchObject({ state: 'short' });
    expect(nextPayout(d(-20), d(0), []).shortfall.toString()).toBe('20.01');
    expect(nextPayout(d(0), d(50), []).shortfall.toString()).toBe('50');
  });

  it('else from the approval date of the pending entry that brings the balance there', () => {
    const pending = [
      { amount: d(10), approves_at: at(3) },
      { amount: d(15), approves_at: at(9) },
      { amount: d(30), approves_at: at(20) },
    ];
    expect(nextPayout(d(20), d(40), pending)).toMatchObject({ eligible: false, eligible_from: at(9) });
    expect(nextPayout(d(0), d(100), pending)).toMatchObject({ eligible: false, eligible_from: null });
    expect(nextPayout(d(0), d(100), pending).shortfall.toString()).toBe('45');
    // a clawback pending lowers what is reached
    expect(
      nextPayout(d(0), d(10), [
        { amount: d(-5), approves_at: at(1) },
        { amount: d(12), approves_at: at(2) },
      ]).shortfall.toString(),
    ).toBe('3');
  });

  it('nothing owed (everything paid, or only entries under review) asks for no amount, even at a zero minimum', () => {
    expect(nextPayout(d(0), d(0), [])).toEqual({
      state: 'nothing_owed',
      eligible: false,
      eligible_from: null,
      shortfall: d(0),
    });
    expect(nextPayout(d(0), d(50), [])).toMatchObject({ state: 'nothing_owed', eligible: false });
    expect(nextPayout(d(20), d(50), [])).toMatchObject({ state: 'short', shortfall: d(30) });
    expect(nextPayout(d(20), d(40), [{ amount: d(30), approves_at: at(3) }])).toMatchObject({
      state: 'scheduled',
      eligible_from: at(3),
    });
  });
});

describe('periodStarts', () => {
  it('covers [from, to) by UTC days, Monday weeks and months', () => {
    const from = new Date('2026-11-25T10:00:00Z');
    const to = new Date('2026-12-02T00:00:00Z');
    expect(periodStarts(from, to, 'day').map((x) => x.toISOString().slice(0, 10))).toEqual([
      '2026-11-25',
      '2026-11-26',
      '2026-11-27',
      '2026-11-28',
      '2026-11-29',
      '2026-11-30',
      '2026-12-01',
    ]);
    expect(periodStarts(from, to, 'week').map((x) => x.toISOString().slice(0, 10))).toEqual([
      '2026-11-23',
      '2026-11-30',
    ]);
    expect(periodStarts(from, to, 'month').map((x) => x.toISOString().slice(0, 10))).toEqual([
      '2026-11-01',
      '2026-12-01',
    ]);
  });
});
