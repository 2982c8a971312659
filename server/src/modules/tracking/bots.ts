import { createIsbotFromList, list } from 'isbot';

/**
 * isbot's list of crawlers, link previewers, monitors and HTTP libraries (maintained upstream),
 * with one entry taken out: headless browsers ("HeadlessChrome"). Merchants run their own
 * end-to-end checks of the integration with them, and those visits must record clicks as a
 * visitor's would.
 */
const isBotOrHttpLibrary = createIsbotFromList(list.filter((pattern) => pattern !== 'headless'));

/**
 * Whether a visit to a `?ref=` link is not a visitor's click. A request without a user agent is
 * never a browser either (isbot answers false for an empty one, since it cannot tell).
 */
export function isBotUserAgent(userAgent: string | undefined): boolean {
  const ua = userAgent?.trim();
  return !ua || isBotOrHttpLibrary(ua);
}
