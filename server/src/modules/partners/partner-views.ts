import { createHash } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { decimalToNumber } from '../../http/serialize.js';
import type { PartnerProgram } from '../../resources.js';
import type { ProgramRow } from './partners.repository.js';

/**
 * What a partner may see of the merchant's data, as pure functions: customers masked, referral
 * links on the merchant's own site, and when their next payout is due.
 */

/**
 * A customer as a partner sees it: the id's prefix (`cus_`) and its last 4 characters, never an
 * e-mail or the whole id (spec/ledger.md, "People"). An id that is an e-mail, or too short to hide
 * anything by cutting, shows 4 characters of a hash of it instead: the same customer always shows
 * the same mask, and nothing of the id itself.
 */
export function maskCustomer(organizationId: string, customerId: string): string {
  const prefix = /^[A-Za-z]{2,8}_/.exec(customerId)?.[0] ?? '';
  const rest = customerId.slice(prefix.length);
  const revealable = rest.length >= 12 && /^[A-Za-z0-9]+$/.test(rest);
  const tail = revealable
    ? rest.slice(-4)
    : createHash('sha256').update(`${organizationId}:${customerId}`).digest('hex').slice(-4);
  return `${prefix || 'customer '}…${tail}`;
}

/** `url` with `ref=<slug>` set (an existing `ref` replaced). */
export function withRef(url: string, slug: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('ref', slug);
  return parsed.toString();
}

/**
 * A referral link to `page`, which must be on the program's website: its host or a subdomain of
 * it, over http(s). Undefined when it is not.
 */
export function linkOnSite(websiteUrl: string, page: string, slug: string): string | undefined {
  let site: URL;
  let target: URL;
  try {
    site = new URL(websiteUrl);
    target = new URL(/^[a-z][a-z0-9+.-]*:/i.test(page) ? page : `${site.protocol}//${page.replace(/^\/+/, '')}`);
  } catch {
    return undefined;
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') return undefined;
  if (target.username || target.password) return undefined;
  const host = site.hostname.replace(/^www\./, '');
  if (target.hostname !== host && !target.hostname.endsWith(`.${host}`)) return undefined;
  return withRef(target.toString(), slug);
}

/** The partner's referral link: the program's website with `ref=<slug>`; null when the merchant set no website. */
export const referralLink = (websiteUrl: string | null, slug: string): string | null =>
  websiteUrl ? withRef(websiteUrl, slug) : null;

/**
 * The referral link as an e-mail says it. Without a website there is no whole link to give: what
 * works is `?ref=<slug>` added to any link to the merchant's site (the snippet reads it on any page).
 */
export function referralLinkText(
  program: { website_url: string | null; organization_name: string },
  slug: string,
): string {
  const link = referralLink(program.website_url, slug);
  return link
    ? `Your referral link: ${link}`
    : `Your referral link is any link to ${program.organization_name}'s site with ?ref=${slug} added at its end (&ref=${slug} when the link already has a "?").`;
}

/**
 * `due`: the approved balance reaches the minimum now; `scheduled`: the pending commissions bring it
 * there on `eligible_from`; `short`: something is owed or coming, `shortfall` below the minimum;
 * `nothing_owed`: nothing approved or pending (all paid, or what is left is under review).
 */
export type NextPayoutState = 'due' | 'scheduled' | 'short' | 'nothing_owed';

export interface NextPayout {
  state: NextPayoutState;
  eligible: boolean;
  eligible_from: Date | null;
  shortfall: Decimal;
}

/**
 * When the partner's next payout is due given the minimum: payouts gather approved commissions
 * whose net reaches the minimum and is above zero (spec/ledger.md, "Payouts"). Due now when the
 * approved balance does; else from the approval date of the pending entry that brings it there,
 * taking pending entries in their approval order; else short by the rest of the minimum (or of what
 * brings a balance below zero after a refund above it), or, with nothing approved or pending
 * (everything paid, or only entries under review), nothing owed.
 */
export function nextPayout(
  approved: Decimal,
  minimum: Decimal,
  pending: { amount: Decimal; approves_at: Date }[],
): NextPayout {
  const reaches = (balance: Decimal) => balance.gte(minimum) && balance.gt(0);
  if (reaches(approved)) return { state: 'due', eligible: true, eligible_from: null, shortfall: new Decimal(0) };
  let balance = approved;
  for (const entry of pending) {
    balance = balance.plus(entry.amount);
    if (reaches(balance))
      return { state: 'scheduled', eligible: false, eligible_from: entry.approves_at, shortfall: new Decimal(0) };
  }
  // Nothing approved or pending (everything paid, or only entries under review): nothing is owed, and
  // no amount is asked for beyond the minimum itself.
  if (balance.isZero())
    return { state: 'nothing_owed', eligible: false, eligible_from: null, shortfall: Decimal.max(minimum, 0) };
  // Short of the minimum, or below zero after a refund of paid commissions: what brings the balance
  // to the minimum and above zero.
  return {
    state: 'short',
    eligible: false,
    eligible_from: null,
    shortfall: Decimal.max(minimum, new Decimal('0.01')).minus(balance),
  };
}

/** The starts of every period of `interval` (UTC; weeks from Monday) that overlaps [from, to). */
export function periodStarts(from: Date, to: Date, interval: 'day' | 'week' | 'month'): Date[] {
  const start = new Date(
    Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), interval === 'month' ? 1 : from.getUTCDate()),
  );
  if (interval === 'week') start.setUTCDate(start.getUTCDate() - ((start.getUTCDay() + 6) % 7));
  const out: Date[] = [];
  for (let at = start; at < to;) {
    out.push(at);
    at = new Date(at);
    if (interval === 'month') at.setUTCMonth(at.getUTCMonth() + 1);
    else at.setUTCDate(at.getUTCDate() + (interval === 'week' ? 7 : 1));
  }
  return out;
}

/** A program as its partners see it: its terms, never the merchant's settings. */
export function toPartnerProgram(p: ProgramRow): PartnerProgram {
  return {
    id: p.id,
    name: p.name,
    commission_type: p.commission_type,
    commission_value: decimalToNumber(p.commission_value),
    currency: p.currency,
    click_window_days: p.click_window_days,
    hold_days: p.hold_days,
    minimum_payout: decimalToNumber(p.minimum_payout),
    signup: p.signup,
    terms: p.terms,
    website_url: p.website_url,
    livemode: p.livemode,
  };
}
