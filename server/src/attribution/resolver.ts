import { AttributionWindowExpiredError, NoAttributionError } from '../domain-errors.js';
import { isUuid } from '../identifiers.js';
import type { AffiliateRule, CachedAffiliate, CachedClick, ProgramRule } from './cache.js';
import { isClickWindowExpired } from './windows.js';

/**
 * Where a referral identifier leads, decided on facts already gathered: pure functions, no I/O and
 * no clock (the time is an input). The facts are read, through the caches, by
 * modules/referrals/attribution-resolver.ts, which asks these functions at each step.
 */

/** Issued cookie ids carry this prefix; slugs cannot contain "_", so the two never collide. */
export const COOKIE_ID_PREFIX = 'ck_';

export interface ClickAttributionInput {
  click_id?: string | undefined;
  cookie_id?: string | undefined;
  ref?: string | undefined;
  /** A promotion code (modules/coupons): the weakest input, used when none of the others attributes. */
  coupon?: string | undefined;
}

export interface Attribution {
  affiliate_id: string;
  program_id: string;
  click_id: string | null;
}

/** The request names a referral: a click (click_id, cookie_id, ref) or a coupon code. */
export const hasClickAttribution = (input: ClickAttributionInput): boolean =>
  Boolean(input.click_id || input.cookie_id || input.ref || input.coupon);

/** The request names a click-side referral (click_id, cookie_id or ref), which beats a coupon code. */
export const hasReferral = (input: ClickAttributionInput): boolean =>
  Boolean(input.click_id || input.cookie_id || input.ref);

/**
 * The row a click-side referral names, before anything is read, in the order click_id, cookie_id,
 * ref: a click by id (only a UUID can be one) or by issued cookie id, else an affiliate by slug (in
 * `ref`, or a raw slug the snippet stored in `cookie_id`). `none`: nothing that can exist.
 */
export type ReferralKey =
  { by: 'click'; column: 'id' | 'cookie_id'; value: string } | { by: 'slug'; slug: string } | { by: 'none' };

export function referralKey(input: ClickAttributionInput): ReferralKey {
  if (input.click_id)
    return isUuid(input.click_id) ? { by: 'click', column: 'id', value: input.click_id } : { by: 'none' };
  if (input.cookie_id?.startsWith(COOKIE_ID_PREFIX))
    return { by: 'click', column: 'cookie_id', value: input.cookie_id };
  const slug = input.cookie_id ?? input.ref;
  return slug ? { by: 'slug', slug: slug.toLowerCase() } : { by: 'none' };
}

/** Only an `active` affiliate's links and codes attribute new visitors (shared/spec/ledger.md). */
export const isAttributing = (affiliate: AffiliateRule | undefined): boolean => affiliate?.status === 'active';

/** A click's facts: the click (undefined: none of the organization's), its affiliate's rule, and its program's rule (read only when the affiliate attributes). */
export interface ClickFacts {
  click: CachedClick | undefined;
  affiliate: AffiliateRule | undefined;
  program: ProgramRule | undefined;
}

/** A click attributes at `at` when it exists, its affiliate is active (else 404) and its program's click window has not passed (else 410). */
export function decideClickReferral({ click, affiliate, program }: ClickFacts, at: Date): Attribution {
  if (!click || !isAttributing(affiliate) || !program) throw new NoAttributionError();
  if (isClickWindowExpired(click.occurred_at, program.click_window_days, at)) throw new AttributionWindowExpiredError();
  return { affiliate_id: click.affiliate_id, program_id: click.program_id, click_id: click.id };
}

/** A slug (or a coupon code) credits its affiliate now, with no window, when that affiliate is active. */
export function decideAffiliateReferral(
  owner: CachedAffiliate | undefined,
  affiliate: AffiliateRule | undefined,
): Attribution {
  if (!owner || !isAttributing(affiliate)) throw new NoAttributionError();
  return { affiliate_id: owner.id, program_id: owner.program_id, click_id: null };
}

/** A click-side refusal a coupon code given with it may still make good (click beats coupon only when it attributes). */
export const couponMayStillAttribute = (err: unknown): boolean =>
  err instanceof NoAttributionError || err instanceof AttributionWindowExpiredError;
