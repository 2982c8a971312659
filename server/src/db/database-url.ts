/**
 * The rule for a PostgreSQL URL setting (DATABASE_URL and its siblings), checked at start the way
 * the drivers will read it: MikroORM and node-postgres both parse it as a WHATWG URL and
 * percent-decode the user name, the password and the database name. A password written as it is
 * (`p#ss`, `12/34`, `50%off`) either makes the URL invalid or silently moves the rest of it into a
 * port, a path, a query or a fragment, which the drivers then report as "No database specified" or
 * "URI malformed", far from the setting. Here the setting is named, with the fix.
 */
export const DATABASE_URL_ENCODING_RULE =
  'write it as postgres://user:password@host:port/database, with the user name and password percent-encoded ' +
  '(e.g. with encodeURIComponent: @ as %40, # as %23, / as %2F, ? as %3F, % as %25, : as %3A)';

/** Why `value` is not a PostgreSQL URL the service can connect with, or undefined when it is. */
export function databaseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `is not a valid URL: ${DATABASE_URL_ENCODING_RULE}`;
  }
  const fault = urlFault(url);
  return fault && `${fault}: ${DATABASE_URL_ENCODING_RULE}`;
}

function urlFault(url: URL): string | undefined {
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    return `must start with postgres:// or postgresql:// (not ${url.protocol}//)`;
  // No host is not refused: the drivers then connect to PGHOST or localhost, as they always did.
  // A `#` in the password starts a fragment: what follows it (the host, the database) is cut off.
  if (url.hash !== '' || url.href.endsWith('#'))
    return 'contains # (a fragment), which cuts the URL short: a # in the password';
  for (const [part, raw] of [
    ['user name', url.username],
    ['password', url.password],
  ] as const) {
    if (!decodes(raw)) return `has a ${part} that is not valid percent-encoding (a % not followed by two hex digits)`;
  }
  const name = url.pathname.replace(/^\//, '');
  if (name === '') return 'names no database (the /database after the host): a / or ? in the password moves it';
  if (!decodes(name)) return 'has a database name that is not valid percent-encoding';
  // An unencoded `/` or `@` of the password leaves the real host inside the path (`/34@host/db`).
  // The name itself is not quoted: it may hold the end of the password.
  if (name.includes('/') || name.includes('@'))
    return 'has a database name with / or @ in it (the host moved into the path): a / in the password';
  return undefined;
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}
