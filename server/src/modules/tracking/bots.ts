/**
 * User agents of crawlers, link previewers, monitors and HTTP libraries: their visits to a
 * `?ref=` link are not clicks. A request without a user agent is never a browser either.
 *
 * `(?<!cu)bot` spares the Cubot phones ("CUBOT P30"). Headless browsers are deliberately not
 * listed: merchants run their own end-to-end checks of the integration with them.
 */
const BOT_PATTERN = new RegExp(
  [
    '(?<!cu)bot\\b',
    'crawl',
    'spider',
    'slurp',
    'scrap',
    'archiver',
    'facebookexternalhit',
    'facebookcatalog',
    'mediapartners-google',
    'google-inspectiontool',
    'google-read-aloud',
    'feedfetcher',
    'lighthouse',
    'pagespeed',
    'gtmetrix',
    'pingdom',
    'statuscake',
    'preview',
    'embedly',
    'whatsapp',
    'vkshare',
    'w3c_validator',
    'validator\\.nu',
    'outbrain',
    'phantomjs',
    '^curl/',
    '^wget',
    'python-requests',
    'python-urllib',
    'aiohttp',
    'httpx',
    '^go-http-client',
    '^java/',
    'okhttp',
    'apache-httpclient',
    'libwww-perl',
    '^axios/',
    'node-fetch',
    '^node$',
    '^undici',
    '^got ',
    '^ruby',
    '^php',
    '^postmanruntime',
    '^insomnia',
  ].join('|'),
  'i',
);

export function isBotUserAgent(userAgent: string | undefined): boolean {
  const ua = userAgent?.trim();
  return !ua || BOT_PATTERN.test(ua);
}
