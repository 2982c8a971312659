import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The browser shows the API's figures and does no money arithmetic (issue 37: money was summed and
 * rounded in ui.tsx, Overview.tsx and PartnerHome.tsx, with two different roundings). Totals, net
 * revenue and earned come from the reports and the partner stats; the web app only formats them
 * (ui.tsx money()). This scans web/src for the forms those sums took.
 */
const WEB = resolve(import.meta.dirname, '../../web/src');

/** What summing or rounding looks like: folds, roundings, and + or - next to a money field. */
const MONEY_ARITHMETIC: [string, RegExp][] = [
  ['a fold (.reduce)', /\.reduce(Right)?\s*\(/],
  ['a rounding', /\b(toFixed|toPrecision)\s*\(|Math\.(round|ceil|trunc)\s*\(/],
  ['a rounding helper', /\bround[A-Z]\w*\s*\(/],
  [
    'a sum of money fields',
    /(amount|revenue|refunded|commissions?|earned|earnings|owed|balance|approved|paid)\b[\w.?[\]'"]*\s+[-+]\s+[\w(]|\s[-+]=?\s+[\w.?]*\.(amount|revenue|refunded|commissions?|earned|earnings|owed|balance|approved|paid)\b/,
  ],
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : /\.(ts|tsx)$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The lines of `text` that do money arithmetic, comments aside. */
export function moneyArithmetic(text: string): string[] {
  return text.split('\n').flatMap((line, i) => {
    const code = line.replace(/\/\/.*$/, '');
    if (/^\s*(\*|\/\*)/.test(code)) return [];
    const hit = MONEY_ARITHMETIC.find(([, pattern]) => pattern.test(code));
    return hit ? [`${i + 1}: ${hit[0]}: ${line.trim()}`] : [];
  });
}

describe('the browser does no money arithmetic', () => {
  it('no file of web/src sums or rounds amounts: it formats the API figures', () => {
    const found = sourceFiles(WEB).flatMap((file) =>
      moneyArithmetic(readFileSync(file, 'utf8')).map((hit) => `${file.slice(WEB.length + 1)}:${hit}`),
    );
    expect(found).toEqual([]);
  });

  it('the check sees the sums the dashboard and the portal used to make (it can fail)', () => {
    const before = [
      'const total = points.reduce((sum, p) => sum + m.of(p), 0);',
      'for (const p of points) byCurrency.set(p.currency, roundAmount((byCurrency.get(p.currency) ?? 0) + p.commissions.approved));',
      'for (const e of p.earnings) earnings.set(e.currency, Math.round(((earnings.get(e.currency) ?? 0) + e.amount) * 100) / 100);',
      'const net = total.revenue - total.refunded;',
      'const shown = (amount * 100).toFixed(0);',
    ];
    for (const line of before) expect(moneyArithmetic(line), line).toHaveLength(1);
    expect(
      moneyArithmetic(
        'const to = new Date(dayStart(new Date()).getTime() + 86_400_000);\nconst most = Math.max(1, ...points.map((p) => p.clicks));',
      ),
    ).toEqual([]);
  });
});
