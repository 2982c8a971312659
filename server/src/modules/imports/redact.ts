/**
 * Keeps credentials out of what an import stores and shows (its `error`, its skipped rows' reasons):
 * those are read by every member of the organization, and a credential is the owner's alone.
 *
 * The messages an import writes are built from our own words and never quote a credential; this is
 * the second line, for text that comes from elsewhere (a source's error body that echoes the key, a
 * library's message that quotes a header).
 */

/** The credential fields that name things rather than grant access: left readable in messages. */
const NOT_SECRET = new Set(['program_id', 'account_id', 'currency', 'affiliates_csv', 'conversions_csv']);

/** Shorter pieces are not masked: they would mangle ordinary words and reveal nothing useful. */
const MIN_PIECE = 4;

/** The words before a credential in an Authorization header (a header value's first piece): not secret. */
const AUTH_SCHEMES = /^(bearer|basic|token)$/i;

export const REDACTED = '[redacted]';

/**
 * Every form in which a credential may appear in a message: the value, each line of it (a key
 * pasted with a line break shows up split), its JSON-escaped form, and the Basic-auth encodings
 * the readers send (`user:` and `user:password`).
 */
export function secretsOf(credentials: Record<string, unknown>): string[] {
  const values = Object.entries(credentials)
    .filter(([key, value]) => !NOT_SECRET.has(key) && typeof value === 'string' && value !== '')
    .map(([, value]) => value as string);
  const out = new Set<string>();
  for (const value of values) {
    out.add(value);
    out.add(JSON.stringify(value).slice(1, -1));
    // eslint-disable-next-line no-control-regex -- a credential pasted with control characters is split on them, each piece redacted
    for (const piece of value.split(/[\s\u0000-\u001f\u007f]+/)) out.add(piece);
    out.add(Buffer.from(`${value}:`).toString('base64'));
    for (const other of values) if (other !== value) out.add(Buffer.from(`${value}:${other}`).toString('base64'));
  }
  return [...out].filter((s) => s.length >= MIN_PIECE && !AUTH_SCHEMES.test(s)).sort((a, b) => b.length - a.length);
}

/** `text` with every secret replaced by "[redacted]" (longest first, so a value masks before its pieces). */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}
