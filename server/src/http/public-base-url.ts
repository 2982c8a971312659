/**
 * The base of every link the service hands out, from the configuration only: a request's Host or
 * X-Forwarded-Proto never chooses where an e-mailed link points (config.ts derives a default).
 */
export function requirePublicBaseUrl(value: string | undefined): string {
  if (typeof value !== 'string' || !/^https?:\/\/[^/?#]+$/i.test(value.replace(/\/+$/, ''))) {
    throw new Error(
      `createApp: config.PUBLIC_BASE_URL must be the service's public origin (e.g. https://affiliates.example.com), got ${JSON.stringify(value)}: every link the service hands out is built from it`,
    );
  }
  return value.replace(/\/+$/, '');
}
