import { hash, randomBytes } from 'node:crypto';
import type { Mode } from '@affiliate-attribution/contract';

/** A live key's prefix (the original form, unchanged). */
export const API_KEY_PREFIX = 'svc-';
/** A test key's prefix (shared/spec/test-mode.md): the key's organization is a test twin. */
export const TEST_API_KEY_PREFIX = 'svc_test_';

const prefixOf = (mode: Mode): string => (mode === 'test' ? TEST_API_KEY_PREFIX : API_KEY_PREFIX);

/**
 * The prefix + 32 random bytes, base64url: 256 bits of entropy. The prefix only tells a person
 * (and a secret scanner) which kind of key it is; the mode a key acts in is its organization's
 * (a test key is a key of the test twin), never read from its text.
 */
export function generateApiKey(mode: Mode = 'live'): string {
  return prefixOf(mode) + randomBytes(32).toString('base64url');
}

/**
 * Keys are stored only as this hash; lookups hash the presented key and compare by index. Every
 * API request hashes its key (the cache of keys is by hash): crypto.hash, one call, takes less
 * than half the time of a createHash object's update and digest (0.8 against 1.8 µs here).
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** `svc-AbCd…wXyZ`, `svc_test_AbCd…wXyZ`: the prefix, four characters, and the last four. */
export function redactApiKey(key: string): string {
  const prefix = key.startsWith(TEST_API_KEY_PREFIX) ? TEST_API_KEY_PREFIX : API_KEY_PREFIX;
  return `${key.slice(0, prefix.length + 4)}…${key.slice(-4)}`;
}

const hasKeyForm = (token: string, prefix: string): boolean => token.startsWith(prefix) && token.length > prefix.length;

/** Accepts `svc-…`, `svc_test_…` and the same after `Bearer ` (the spec's two forms); anything else is no key. */
export function parseAuthorizationHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const value = header.trim();
  const token = /^bearer\s+/i.test(value) ? value.replace(/^bearer\s+/i, '') : value;
  return (hasKeyForm(token, API_KEY_PREFIX) || hasKeyForm(token, TEST_API_KEY_PREFIX)) && !/\s/.test(token)
    ? token
    : undefined;
}
