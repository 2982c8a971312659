/**
 * Text PostgreSQL cannot store, found before a source row is written. A `text` column refuses NUL
 * (U+0000); `jsonb` refuses NUL and a lone UTF-16 surrogate (half of a pair, which JavaScript
 * strings allow and UTF-8 cannot encode; JSON.stringify writes it as `\ud800`, which jsonb
 * rejects); and in a `text` column the driver silently turns a lone surrogate into U+FFFD, which
 * would change the data without a word. A row holding either is skipped with its reason, and the
 * import goes on.
 */

/** Half of a surrogate pair without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The problem with one string, or undefined when PostgreSQL stores it as it is. */
function problemOf(text: string): string | undefined {
  if (text.includes('\u0000')) return 'a NUL character (\\u0000)';
  const lone = LONE_SURROGATE.exec(text);
  return lone ? `a lone UTF-16 surrogate (\\u${lone[0].charCodeAt(0).toString(16).toUpperCase()})` : undefined;
}

/**
 * The reason a source row cannot be stored, naming its first such field ("text that cannot be
 * stored: name holds a lone UTF-16 surrogate (\uD800)"), or undefined when every string in it can be.
 */
export function unstorableText(row: unknown): string | undefined {
  const found = firstProblem(row, '');
  return found && `text that cannot be stored: ${found.path || 'the row'} holds ${found.problem}`;
}

function firstProblem(value: unknown, path: string): { path: string; problem: string } | undefined {
  if (typeof value === 'string') {
    const problem = problemOf(value);
    return problem ? { path, problem } : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = firstProblem(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    for (const [key, inner] of Object.entries(value)) {
      const found = firstProblem(inner, path ? `${path}.${key}` : key);
      if (found) return found;
    }
  }
  return undefined;
}

/** `text` made storable for a message or a skipped row's id: NUL and lone surrogates written as visible `\uXXXX`. */
export function printable(text: string): string {
  return text.replace(
    new RegExp(`\u0000|${LONE_SURROGATE.source}`, 'g'),
    (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
  );
}
