import { InvalidInputError } from '../domain-errors.js';

export type ConversionKind = 'initial' | 'recurring';

/**
 * What a customer's first charge reported by customer alone (no click field, no `kind`) is: the
 * one difference between channels in the kind rule, chosen by each channel's policy
 * (charges/channels.ts: `recurring` for the API, `initial` for payment providers).
 */
export type FirstChargeByCustomerPolicy = 'recurring' | 'initial';

export interface KindInput {
  requested: ConversionKind | undefined;
  /** The conversion belongs to a customer (tracked before, or created by this conversion). */
  hasCustomer: boolean;
  /** The customer has no conversion yet. */
  isFirstConversion: boolean;
  /** Attributed by customer_id alone, without any click field. */
  byCustomerIdOnly: boolean;
  /** The channel's policy for a first charge by customer alone. */
  firstChargeByCustomer: FirstChargeByCustomerPolicy;
}

/**
 * The kind of a conversion (decisions.md, Conversions 1 to 5):
 * customer_id alone -> recurring unless `initial` is asked on the first conversion (or the
 * channel's policy makes the first one initial);
 * click attribution -> initial on the customer's first conversion, else recurring.
 */
export function resolveConversionKind(input: KindInput): ConversionKind {
  const { requested, hasCustomer, isFirstConversion, byCustomerIdOnly, firstChargeByCustomer } = input;
  if (requested === 'initial' && hasCustomer && !isFirstConversion) {
    throw new InvalidInputError('kind: "initial" is only allowed on the customer\'s first conversion');
  }
  if (requested === 'recurring' && !hasCustomer) {
    throw new InvalidInputError('kind: "recurring" requires a customer_id');
  }
  if (requested) return requested;
  if (byCustomerIdOnly) return isFirstConversion && firstChargeByCustomer === 'initial' ? 'initial' : 'recurring';
  return isFirstConversion ? 'initial' : 'recurring';
}
