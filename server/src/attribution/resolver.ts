import type { AffiliatesRepository } from '../modules/affiliates/affiliates.repository.js';
import type { ClicksRepository } from '../modules/clicks/clicks.repository.js';
import type { CouponsRepository } from '../modules/coupons/coupons.repository.js';
import type { ProgramsRepository } from '../modules/programs/programs.repository.js';
import { AttributionWindowExpiredError, NoAttributionError } from '../domain-errors.js';
import { isUuid } from '../identifiers.js';
import { AttributionCache, type AffiliateRule, type CachedAffiliate, type CachedClick, type ProgramRule } from './cache.js';
import { isClickWindowExpired } from './windows.js';

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

/** Where the resolver reads what its caches do not hold: the repositories of the modules that own those rows. */
export interface AttributionSources {
  programs: Pick<ProgramsRepository, 'findRule'>;
  affiliates: Pick<AffiliatesRepository, 'findBySlug' | 'findRule'>;
  clicks: Pick<ClicksRepository, 'findForAttribution'>;
  coupons: Pick<CouponsRepository, 'findByCode'>;
}

/**
 * Where a referral identifier leads, with the caches of cache.ts in front of PostgreSQL. The one
 * place that knows how cookie ids, slugs and click ids resolve, and when a click is too old. Its
 * reads are on the hot paths: single index lookups through the repositories (AttributionSources).
 */
export class AttributionResolver {
  constructor(
    private readonly sources: AttributionSources,
    readonly cache = new AttributionCache(),
  ) {}

  /**
   * Click-side attribution within one organization, in the order click_id, cookie_id, ref, and
   * last a coupon code (when none of the others is given or resolves).
   * A click is subject to its program's click window at `at` (410); a slug (in `ref`, or a raw
   * slug the snippet stored in `cookie_id`) credits its affiliate now, with no window. Anything
   * this organization did not issue, or whose affiliate is not `active` (disabled, or an
   * application awaiting approval): 404 "No attribution found". Renewals of customers already
   * attributed do not come here: they keep earning whatever the affiliate's status.
   */
  async resolveClick(organizationId: string, input: ClickAttributionInput, at: Date): Promise<Attribution> {
    if (!input.coupon) return this.resolveReferral(organizationId, input, at);
    // Click beats coupon: the code attributes only when no click, cookie or ref does (none given, or none resolves).
    if (input.click_id || input.cookie_id || input.ref) {
      try {
        return await this.resolveReferral(organizationId, input, at);
      } catch (err) {
        if (!(err instanceof NoAttributionError || err instanceof AttributionWindowExpiredError)) throw err;
      }
    }
    const coupon = await this.sources.coupons.findByCode(organizationId, input.coupon);
    if (!coupon || !(await this.isAttributing(coupon.affiliate_id))) throw new NoAttributionError();
    return { affiliate_id: coupon.affiliate_id, program_id: coupon.program_id, click_id: null };
  }

  private async resolveReferral(organizationId: string, input: ClickAttributionInput, at: Date): Promise<Attribution> {
    let click: CachedClick | undefined;
    if (input.click_id) {
      click = await this.clickById(organizationId, input.click_id);
    } else if (input.cookie_id?.startsWith(COOKIE_ID_PREFIX)) {
      click = await this.clickByCookie(organizationId, input.cookie_id);
    } else {
      const slug = input.cookie_id ?? input.ref;
      const affiliate = slug ? await this.affiliateBySlug(organizationId, slug) : undefined;
      if (!affiliate) throw new NoAttributionError();
      return { affiliate_id: affiliate.id, program_id: affiliate.program_id, click_id: null };
    }
    if (!click || !(await this.isAttributing(click.affiliate_id))) throw new NoAttributionError();
    const program = await this.programRule(click.program_id);
    if (isClickWindowExpired(click.occurred_at, program.click_window_days, at)) throw new AttributionWindowExpiredError();
    return { affiliate_id: click.affiliate_id, program_id: click.program_id, click_id: click.id };
  }

  /** The affiliate a slug credits now: undefined when no affiliate of the organization has it, or when that affiliate is not `active`. */
  async affiliateBySlug(organizationId: string, rawSlug: string): Promise<CachedAffiliate | undefined> {
    const slug = rawSlug.toLowerCase();
    const key = AttributionCache.key(organizationId, slug);
    let affiliate = this.cache.affiliatesBySlug.get(key);
    if (!affiliate) {
      affiliate = await this.sources.affiliates.findBySlug(organizationId, slug);
      if (!affiliate) return undefined;
      this.cache.affiliatesBySlug.set(key, affiliate);
    }
    return (await this.isAttributing(affiliate.id)) ? affiliate : undefined;
  }

  /** Only an `active` affiliate's links attribute new visitors (shared/spec/ledger.md). */
  private async isAttributing(affiliateId: string): Promise<boolean> {
    return (await this.affiliateRule(affiliateId))?.status === 'active';
  }

  /** An affiliate's status, own rate and e-mails (cached like program rules); undefined when there is no such affiliate. */
  async affiliateRule(affiliateId: string): Promise<AffiliateRule | undefined> {
    let rule = this.cache.affiliateRules.get(affiliateId);
    if (rule === undefined) {
      rule = await this.sources.affiliates.findRule(affiliateId);
      if (rule === undefined) return undefined;
      if (this.cache.programRuleTtlMs > 0) this.cache.affiliateRules.set(affiliateId, rule);
    }
    return rule;
  }

  /** An affiliate's status or rate changed (here, or on another instance): its next use reads it again. */
  forgetAffiliate(affiliateId: string): void {
    this.cache.affiliateRules.delete(affiliateId);
  }

  async programRule(programId: string): Promise<ProgramRule> {
    const cached = this.cache.programs.get(programId);
    if (cached) return cached;
    const rule = await this.sources.programs.findRule(programId);
    if (!rule) throw new Error(`program ${programId} not found`);
    if (this.cache.programRuleTtlMs > 0) this.cache.programs.set(programId, rule);
    return rule;
  }

  /** A program changed (here, or on another instance: db/change-notifications.ts): its next use reads it again. */
  forgetProgram(programId: string): void {
    this.cache.programs.delete(programId);
  }

  /** Change notifications may have been missed (the listener reconnected): every rule and status is read again. */
  forgetAllChangeable(): void {
    this.cache.programs.clear();
    this.cache.affiliateRules.clear();
  }

  private async clickById(organizationId: string, clickId: string): Promise<CachedClick | undefined> {
    if (!isUuid(clickId)) return undefined;
    const key = AttributionCache.key(organizationId, clickId.toLowerCase());
    return this.cache.clicksById.get(key) ?? this.loadClick(key, this.cache.clicksById, 'id', organizationId, clickId);
  }

  private async clickByCookie(organizationId: string, cookieId: string): Promise<CachedClick | undefined> {
    const key = AttributionCache.key(organizationId, cookieId);
    return this.cache.clicksByCookie.get(key) ?? this.loadClick(key, this.cache.clicksByCookie, 'cookie_id', organizationId, cookieId);
  }

  private async loadClick(
    key: string,
    into: AttributionCache['clicksById'],
    column: 'id' | 'cookie_id',
    organizationId: string,
    value: string,
  ): Promise<CachedClick | undefined> {
    const click = await this.sources.clicks.findForAttribution(organizationId, column, value);
    if (!click) return undefined;
    into.set(key, click);
    return click;
  }
}
