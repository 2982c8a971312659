import type { FirstChargeByCustomerPolicy } from '../attribution/kind.js';

/**
 * How a channel that reports charges, refunds and cancellations differs from the others: the only
 * differences there are, named here and applied by record.ts. Everything else (attribution, kind,
 * commission, windows, caps, customer status, refund identity, amounts and rounding) is one rule
 * for every channel (decision.ts).
 */
export interface ChannelPolicy {
  readonly name: 'api' | 'provider';
  /**
   * A tracked customer's first charge reported by customer alone (no click field, no `kind`):
   * `recurring` for the API (a merchant's backend reports renewals by customer_id and marks a first
   * sale with `kind: "initial"`); `initial` for payment providers (a provider's first payment of a
   * customer tracked at signup, after a trial say, is the sale the referral earned).
   */
  readonly firstChargeByCustomer: FirstChargeByCustomerPolicy;
  /**
   * A charge of zero: a conversion of 0 (the API: the merchant asked for one), or, for providers,
   * no sale but a referred signup (a free trial's checkout, a fully discounted order): the customer
   * is tracked as `trial` when the charge carries a referral and a customer.
   */
  readonly zeroAmountCharge: 'conversion' | 'trial-signup';
  /**
   * What the rules refuse (a 4xx: no attribution, a click window passed, a refund above the
   * conversion's amount or identified refunds totalling more): the API answers it (400, 404, 409,
   * 410); a provider's event would be refused the same way on every retry, so it is recorded as
   * nothing, with the reason (a 4xx would make the provider retry for days). A 429 or a 5xx may
   * pass later, so those fail on every channel.
   */
  readonly refusals: 'answer' | 'ignore';
}

/** The REST API: `POST /api/conversions`, `POST /api/conversions/{id}/refund`. */
export const API_CHANNEL = {
  name: 'api',
  firstChargeByCustomer: 'recurring',
  zeroAmountCharge: 'conversion',
  refusals: 'answer',
} as const satisfies ChannelPolicy;

/** Every payment provider's webhooks (webhooks/dispatcher.ts), whichever the provider. */
export const PROVIDER_CHANNEL = {
  name: 'provider',
  firstChargeByCustomer: 'initial',
  zeroAmountCharge: 'trial-signup',
  refusals: 'ignore',
} as const satisfies ChannelPolicy;
