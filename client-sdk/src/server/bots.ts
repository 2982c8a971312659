import { createIsbotFromList, list } from 'isbot';

/**
 * isbot's maintained list of crawlers, link previewers, monitors and HTTP libraries, less
 * headless browsers: the same rule as the service's own public click endpoint
 * (server/src/modules/tracking/bots.ts), so that a merchant's end-to-end check in a headless
 * browser records its click either way.
 */
const isBotOrHttpLibrary = createIsbotFromList(list.filter((pattern) => pattern !== 'headless'));

/** A visit that is no visitor's click: a known bot, or no user agent at all (no browser omits it). */
export function isBotUserAgent(userAgent: string | undefined): boolean {
  const ua = userAgent?.trim();
  return !ua || isBotOrHttpLibrary(ua);
}
