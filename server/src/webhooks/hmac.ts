import { createHmac, timingSafeEqual } from 'node:crypto';

export const hmacSha256Hex = (key: string | Buffer, content: string | Buffer): string =>
  createHmac('sha256', key).update(content).digest('hex');

/** Constant-time comparison of two hex digests (a malformed or wrong-length one never matches). */
export function hexDigestEquals(expectedHex: string, presentedHex: string): boolean {
  if (!/^[0-9a-f]+$/i.test(presentedHex)) return false;
  const expected = Buffer.from(expectedHex, 'hex');
  const presented = Buffer.from(presentedHex, 'hex');
  return expected.length === presented.length && timingSafeEqual(expected, presented);
}
