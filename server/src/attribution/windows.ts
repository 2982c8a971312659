const DAY_MS = 86_400_000;

/** A click older than the program's click window at `at` no longer attributes (410). */
export function isClickWindowExpired(clickOccurredAt: Date, clickWindowDays: number, at: Date): boolean {
  return at.getTime() - clickOccurredAt.getTime() > clickWindowDays * DAY_MS;
}

/** Calendar months in UTC; the 31st plus one month is the last day of the next month. */
export function addMonthsUtc(date: Date, months: number): Date {
  const result = new Date(date.getTime());
  const day = result.getUTCDate();
  result.setUTCDate(1);
  result.setUTCMonth(result.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(result.getUTCFullYear(), result.getUTCMonth() + 1, 0)).getUTCDate();
  result.setUTCDate(Math.min(day, lastDay));
  return result;
}

/**
 * The commission window runs from the customer's first conversion for `months` (null: lifetime).
 * A conversion after its end earns nothing and caps the customer.
 */
export function isPastCommissionWindow(firstConversionAt: Date, months: number | null, at: Date): boolean {
  if (months === null) return false;
  return at.getTime() > addMonthsUtc(firstConversionAt, months).getTime();
}
