import type { AffiliatesRepository } from '../affiliates/affiliates.repository.js';
import type { ClicksRepository } from '../clicks/clicks.repository.js';
import type { CouponsRepository } from '../coupons/coupons.repository.js';
import type { ProgramsRepository } from '../programs/programs.repository.js';
import {
  AttributionCache,
  type AffiliateRule,
  type CachedAffiliate,
  type CachedClick,
  type ProgramRule,
} from '../../attribution/cache.js';
import {
  couponMayStillAttribute,
  decideAffiliateReferral,
  decideClickReferral,
  hasReferral,
  isAttributing,
  referralKey,
  type Attribution,
  type ClickAttributionInput,
} from '../../attribution/resolver.js';

/** Where the resolver reads what its caches do not hold: the repositories of the modules that own those rows. */
export interface AttributionSources {
  programs: Pick<ProgramsRepository, 'findRule'>;
  affiliates: Pick<AffiliatesRepository, 'findBySlug' | 'findRule'>;
  clicks: Pick<ClicksRepository, 'findForAttribution'>;
  coupons: Pick<CouponsRepository, 'findByCode'>;
}

/**
 * Gathers what attribution is decided on, with the caches of attribution/cache.ts in front of
 * PostgreSQL, and asks the pure rules of attribution/resolver.ts at each step (which row a referral
 * names, whether it attributes): the facts are read only as far as the decision needs them. Its
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
    if (hasReferral(input)) {
      try {
        return await this.resolveReferral(organizationId, input, at);
      } catch (err) {
        if (!couponMayStillAttribute(err)) throw err;
      }
    }
    const coupon = await this.sources.coupons.findByCode(organizationId, input.coupon);
    const owner = coupon && { id: coupon.affiliate_id, program_id: coupon.program_id };
    return decideAffiliateReferral(owner, owner && (await this.affiliateRule(organizationId, owner.id)));
  }

  private async resolveReferral(organizationId: string, input: ClickAttributionInput, at: Date): Promise<Attribution> {
    const key = referralKey(input);
    if (key.by === 'none') return decideAffiliateReferral(undefined, undefined);
    if (key.by === 'slug') {
      const owner = await this.affiliateRowBySlug(organizationId, key.slug);
      return decideAffiliateReferral(owner, owner && (await this.affiliateRule(organizationId, owner.id)));
    }
    const click =
      key.column === 'id'
        ? await this.clickById(organizationId, key.value)
        : await this.clickByCookie(organizationId, key.value);
    const affiliate = click && (await this.affiliateRule(organizationId, click.affiliate_id));
    // The program is read only when the click could attribute: an unknown click costs no more reads.
    const program =
      click && isAttributing(affiliate) ? await this.programRule(organizationId, click.program_id) : undefined;
    return decideClickReferral({ click, affiliate, program }, at);
  }

  /** The affiliate a slug credits now: undefined when no affiliate of the organization has it, or when that affiliate is not `active`. */
  async affiliateBySlug(organizationId: string, rawSlug: string): Promise<CachedAffiliate | undefined> {
    const affiliate = await this.affiliateRowBySlug(organizationId, rawSlug.toLowerCase());
    return affiliate && isAttributing(await this.affiliateRule(organizationId, affiliate.id)) ? affiliate : undefined;
  }

  /** The affiliate that has a (lower-case) slug in the organization, whatever its status. */
  private async affiliateRowBySlug(organizationId: string, slug: string): Promise<CachedAffiliate | undefined> {
    const key = AttributionCache.key(organizationId, slug);
    let affiliate = this.cache.affiliatesBySlug.get(key);
    if (!affiliate) {
      affiliate = await this.sources.affiliates.findBySlug(organizationId, slug);
      if (!affiliate) return undefined;
      this.cache.affiliatesBySlug.set(key, affiliate);
    }
    return affiliate;
  }

  /** An affiliate's status, own rate and e-mails (cached like program rules); undefined when there is no such affiliate. */
  async affiliateRule(organizationId: string, affiliateId: string): Promise<AffiliateRule | undefined> {
    let rule = this.cache.affiliateRules.get(affiliateId);
    if (rule === undefined) {
      rule = await this.sources.affiliates.findRule(organizationId, affiliateId);
      if (rule === undefined) return undefined;
      if (this.cache.programRuleTtlMs > 0) this.cache.affiliateRules.set(affiliateId, rule);
    }
    return rule;
  }

  /** An affiliate's status or rate changed (here, or on another instance): its next use reads it again. */
  forgetAffiliate(affiliateId: string): void {
    this.cache.affiliateRules.delete(affiliateId);
  }

  /**
   * An affiliate's slug and aliases changed (an erased partner's: affiliates/erasure.ts), here or on
   * another instance: every cached slug that names it is dropped, with its status. A scan of the
   * slug cache, which only an erasure costs.
   */
  forgetAffiliateLinks(affiliateId: string): void {
    this.cache.affiliateRules.delete(affiliateId);
    for (const [key, affiliate] of this.cache.affiliatesBySlug.entries())
      if (affiliate.id === affiliateId) this.cache.affiliatesBySlug.delete(key);
  }

  /** The organization's program (read by it: on Citus, on its shard). */
  async programRule(organizationId: string, programId: string): Promise<ProgramRule> {
    const cached = this.cache.programs.get(programId);
    if (cached) return cached;
    const rule = await this.sources.programs.findRule(organizationId, programId);
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
    // A missed erasure, reset or undo could leave a slug naming a partner gone, which a new partner
    // may take, or a click deleted and recorded again with the same id.
    this.cache.affiliatesBySlug.clear();
    this.cache.clicksByCookie.clear();
    this.cache.clicksById.clear();
  }

  /**
   * Rows of the organization were deleted in bulk (a test-data reset, its deletion, an import's
   * undo), here or on another instance: every slug and click cached under it is dropped, so that a
   * slug or click id re-created afterwards is read afresh. A scan of the caches, which only those
   * rare paths cost.
   */
  forgetOrganization(organizationId: string): void {
    const prefix = AttributionCache.key(organizationId, '');
    for (const cache of [this.cache.affiliatesBySlug, this.cache.clicksByCookie, this.cache.clicksById])
      for (const key of [...cache.keys()]) if (key.startsWith(prefix)) cache.delete(key);
  }

  /** How many slugs and clicks of the organization this instance holds (what its deletion must leave at 0). */
  cachedEntriesOf(organizationId: string): number {
    const prefix = AttributionCache.key(organizationId, '');
    let n = 0;
    for (const cache of [this.cache.affiliatesBySlug, this.cache.clicksByCookie, this.cache.clicksById])
      for (const key of cache.keys()) if (key.startsWith(prefix)) n++;
    return n;
  }

  private async clickById(organizationId: string, clickId: string): Promise<CachedClick | undefined> {
    const key = AttributionCache.key(organizationId, clickId.toLowerCase());
    return this.cache.clicksById.get(key) ?? this.loadClick(key, this.cache.clicksById, 'id', organizationId, clickId);
  }

  private async clickByCookie(organizationId: string, cookieId: string): Promise<CachedClick | undefined> {
    const key = AttributionCache.key(organizationId, cookieId);
    return (
      this.cache.clicksByCookie.get(key) ??
      this.loadClick(key, this.cache.clicksByCookie, 'cookie_id', organizationId, cookieId)
    );
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
