import type { ReportTotals } from '@affiliate-attribution/contract';

/**
 * The currency the Overview opens on: the organization's main one, not the alphabetically first.
 * "Main" is read from the data: the currency with the most conversions over the reports' longest
 * period (three years); on a tie (a new organization has none) the one with the most clicks and
 * signups; then the currency of the organization's oldest program (the one it set up first); then
 * the first of the list. Figures are never converted, so counts are what can be compared.
 */
export function mainCurrency(
  currencies: readonly string[],
  longRunTotals: readonly ReportTotals[],
  oldestProgramCurrency: string | undefined,
): string | undefined {
  if (currencies.length <= 1) return currencies[0];
  const byCurrency = new Map(longRunTotals.map((t) => [t.currency, t]));
  const score = (c: string) => {
    const t = byCurrency.get(c);
    return [t?.conversions ?? 0, (t?.clicks ?? 0) + (t?.customers ?? 0), c === oldestProgramCurrency ? 1 : 0];
  };
  return [...currencies].sort((a, b) => {
    const [sa, sb] = [score(a), score(b)];
    for (let i = 0; i < sa.length; i++) if (sa[i] !== sb[i]) return sb[i] - sa[i];
    return a < b ? -1 : a > b ? 1 : 0;
  })[0];
}
