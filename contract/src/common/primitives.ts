import { z } from 'zod';

export const Uuid = z.string().uuid();
export const Timestamp = z.string().describe('ISO-8601 timestamp in UTC.');

/** Input timestamps accept any ISO-8601 offset; the service stores and answers them in UTC. */
export const TimestampInput = z.string().datetime({ offset: true });

export const Money = z.number().finite();

/**
 * The largest amount accepted on input, in major units (one trillion): far above any real
 * charge, and small enough that every commission derived from it fits the stored precision.
 */
export const MAX_MONEY_INPUT = 1_000_000_000_000;
/** An amount sent by a client: finite, 0 to MAX_MONEY_INPUT. */
export const MoneyInput = Money.min(0).max(MAX_MONEY_INPUT);
export const CurrencyCode = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'Expected an ISO 4217 currency code such as USD')
  .describe('ISO 4217 currency code; case-insensitive on input, upper case in responses.');

/** Non-empty identifier strings chosen by the merchant or issued by the service. */
export const Identifier = z.string().min(1).max(255);

export const Deduped = z
  .boolean()
  .describe('True when this request repeated an earlier one and the existing record is returned unchanged; false when the record was created now.');
