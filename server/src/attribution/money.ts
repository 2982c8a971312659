import currencyCodes from 'currency-codes';
import { Decimal } from 'decimal.js';
import { InvalidInputError } from '../domain-errors.js';

/** Codes ISO 4217 does not list (the contract accepts any three letters): cents, as most currencies. */
const UNLISTED_CURRENCY_DIGITS = 2;

/** Three letters make 17,576 codes at most; a bound all the same, as codes come from clients. */
const MAX_REMEMBERED_CURRENCIES = 1_000;
const digitsByCurrency = new Map<string, number>();

/**
 * The decimals of a currency's minor unit, its ISO 4217 exponent: 2 for USD (cents), 0 for JPY,
 * 3 for BHD. From currency-codes, which carries ISO's own list (not CLDR's display digits, which
 * differ for HUF or IDR).
 */
export function minorUnitDigits(currency: string): number {
  let digits = digitsByCurrency.get(currency);
  if (digits === undefined) {
    // currency-codes searches its list on every call: looked up once per code, as every conversion asks.
    digits = currencyCodes.code(currency.toUpperCase())?.digits ?? UNLISTED_CURRENCY_DIGITS;
    if (digitsByCurrency.size < MAX_REMEMBERED_CURRENCIES) digitsByCurrency.set(currency, digits);
  }
  return digits;
}

/** 400 for an amount finer than its currency's minor unit (0.005 USD, 0.5 JPY): no such charge exists. */
export function assertWholeMinorUnits(field: string, amount: number | string, currency: string): void {
  const digits = minorUnitDigits(currency);
  if (new Decimal(amount).decimalPlaces() > digits) {
    throw new InvalidInputError(
      `${field}: ${currency.toUpperCase()} amounts have at most ${digits} decimal${digits === 1 ? '' : 's'}`,
    );
  }
}

/** The one rounding of money the service does: half-up to the currency's minor unit, as exact decimal text. */
export function roundToMinorUnit(value: Decimal, currency: string): string {
  const digits = minorUnitDigits(currency);
  return value.toDecimalPlaces(digits, Decimal.ROUND_HALF_UP).toFixed(digits);
}
