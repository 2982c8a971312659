import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';
import type { FraudRules } from '../attribution/program-rules.js';

/**
 * The fraud signals that put a sale's commission `on_hold` (shared/spec/ledger.md), as a pure
 * function of facts the conversions service gathers only for the rules that are on and can apply.
 * click_flood acts on clicks instead (modules/clicks/click-flood.ts): it holds no commission.
 */

export interface HoldReason {
  rule: 'self_referral' | 'disposable_email' | 'fast_conversion';
  detail: string;
}

/** A conversion within this many seconds of its click is a fast_conversion. */
export const FAST_CONVERSION_SECONDS = 10;

export interface FraudFacts {
  customerEmail: string | null | undefined;
  affiliateEmail: string | null | undefined;
  /** The click the conversion is attributed by, when it is. */
  click?: { occurredAt: Date; ip: string | null; userAgent: string | null } | undefined;
  /** The partner's last portal sign-in, when known. */
  partnerSignIn?: { ip: string | null; userAgent: string | null } | undefined;
  occurredAt: Date;
}

const domainOf = (email: string): string =>
  email
    .slice(email.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase();

/** The maintained list (disposable-email-domains-js, from the disposable-email-domains project), built once when first needed. */
let disposableDomains: Set<string> | undefined;

/** The e-mail's domain, or a domain it is under (`x.mailinator.com`), is on the disposable list. */
export function isDisposableEmail(email: string): boolean {
  disposableDomains ??= disposableEmailBlocklistSet();
  const labels = domainOf(email).split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    if (disposableDomains.has(labels.slice(i).join('.'))) return true;
  }
  return false;
}

/** Every rule that fires, each with its evidence in words; empty: the entry is not held. */
export function holdReasons(rules: FraudRules, facts: FraudFacts): HoldReason[] {
  const reasons: HoldReason[] = [];
  const email = facts.customerEmail?.trim();
  if (rules.self_referral) {
    if (email && facts.affiliateEmail && email.toLowerCase() === facts.affiliateEmail.trim().toLowerCase()) {
      reasons.push({ rule: 'self_referral', detail: `The customer's e-mail ${email} is the affiliate's own` });
    } else if (
      facts.click?.ip &&
      facts.click.userAgent &&
      facts.partnerSignIn?.ip === facts.click.ip &&
      facts.partnerSignIn.userAgent === facts.click.userAgent
    ) {
      reasons.push({
        rule: 'self_referral',
        detail: `The click came from ${facts.click.ip} with the user agent of the affiliate's own portal sign-in`,
      });
    }
  }
  if (rules.disposable_email && email && isDisposableEmail(email)) {
    reasons.push({
      rule: 'disposable_email',
      detail: `The customer's e-mail domain ${domainOf(email)} is a disposable e-mail service`,
    });
  }
  if (rules.fast_conversion && facts.click) {
    const seconds = (facts.occurredAt.getTime() - facts.click.occurredAt.getTime()) / 1000;
    if (seconds >= 0 && seconds <= FAST_CONVERSION_SECONDS) {
      reasons.push({
        rule: 'fast_conversion',
        detail: `Converted ${seconds.toFixed(1)} s after its click (at most ${FAST_CONVERSION_SECONDS} s)`,
      });
    }
  }
  return reasons;
}
