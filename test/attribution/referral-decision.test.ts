import { describe, expect, it } from 'vitest';
import type { AffiliateRule, CachedClick, ProgramRule } from '../../server/src/attribution/cache.js';
import { decideAffiliateReferral, decideClickReferral, referralKey } from '../../server/src/attribution/resolver.js';
import { AttributionWindowExpiredError, NoAttributionError } from '../../server/src/domain-errors.js';

/**
 * Where a referral leads, decided on facts already gathered (server/src/attribution/resolver.ts):
 * the rules the resolver of modules/referrals asks at each step, without a database.
 */
const CLICK_ID = '0b7e4d3c-1a2b-4c5d-8e9f-0a1b2c3d4e5f';
const active: AffiliateRule = {
  status: 'active',
  commission_value: null,
  email: 'a@example.com',
  portal_sign_in_ip: null,
  portal_sign_in_user_agent: null,
};
const click: CachedClick = {
  id: CLICK_ID,
  affiliate_id: 'aff',
  program_id: 'prog',
  occurred_at: new Date('2026-01-01T00:00:00Z'),
};
const program = { click_window_days: 30 } as ProgramRule;

describe('referral decisions (pure)', () => {
  it('names the row to read in the order click_id, cookie_id, ref; a click_id that is no UUID names nothing', () => {
    expect(referralKey({ click_id: CLICK_ID, cookie_id: 'ck_x', ref: 'slug' })).toEqual({
      by: 'click',
      column: 'id',
      value: CLICK_ID,
    });
    expect(referralKey({ click_id: 'not-a-uuid', ref: 'slug' })).toEqual({ by: 'none' });
    expect(referralKey({ cookie_id: 'ck_abc', ref: 'slug' })).toEqual({
      by: 'click',
      column: 'cookie_id',
      value: 'ck_abc',
    });
    expect(referralKey({ cookie_id: 'Partner-Slug' })).toEqual({ by: 'slug', slug: 'partner-slug' });
    expect(referralKey({ ref: 'Jane' })).toEqual({ by: 'slug', slug: 'jane' });
    expect(referralKey({ coupon: 'SAVE10' })).toEqual({ by: 'none' });
  });

  it('a click attributes within its window to an active affiliate; else 404 (no attribution) or 410 (window passed)', () => {
    const within = new Date('2026-01-20T00:00:00Z');
    expect(decideClickReferral({ click, affiliate: active, program }, within)).toEqual({
      affiliate_id: 'aff',
      program_id: 'prog',
      click_id: CLICK_ID,
    });
    expect(() => decideClickReferral({ click: undefined, affiliate: undefined, program: undefined }, within)).toThrow(
      NoAttributionError,
    );
    expect(() => decideClickReferral({ click, affiliate: { ...active, status: 'disabled' }, program }, within)).toThrow(
      NoAttributionError,
    );
    expect(() => decideClickReferral({ click, affiliate: active, program }, new Date('2026-03-01T00:00:00Z'))).toThrow(
      AttributionWindowExpiredError,
    );
  });

  it('a slug or a coupon credits its affiliate now, only while that affiliate is active', () => {
    expect(decideAffiliateReferral({ id: 'aff', program_id: 'prog' }, active)).toEqual({
      affiliate_id: 'aff',
      program_id: 'prog',
      click_id: null,
    });
    expect(() => decideAffiliateReferral({ id: 'aff', program_id: 'prog' }, { ...active, status: 'pending' })).toThrow(
      NoAttributionError,
    );
    expect(() => decideAffiliateReferral(undefined, undefined)).toThrow(NoAttributionError);
  });
});
