import { ATTRIBUTION_COOKIE } from '../cookie.js';

export interface CookieAttributes {
  /** Seconds; 0 or less: a session cookie (no Max-Age). */
  maxAgeSeconds: number;
  secure: boolean;
  domain?: string;
}

/**
 * The `Set-Cookie` value for `svc_aff`, with the attributes the snippet gives it: `Path=/`,
 * `SameSite=Lax` (sent on the top-level navigation back from a payment page), `Secure` on HTTPS.
 * Not HttpOnly: the snippet's `svc('trial', id)` reads it in the page.
 */
export function attributionSetCookie(value: string, { maxAgeSeconds, secure, domain }: CookieAttributes): string {
  let cookie = `${ATTRIBUTION_COOKIE}=${encodeURIComponent(value)}; Path=/`;
  if (maxAgeSeconds > 0) cookie += `; Max-Age=${Math.floor(maxAgeSeconds)}`;
  if (domain) cookie += `; Domain=${domain}`;
  cookie += '; SameSite=Lax';
  if (secure) cookie += '; Secure';
  return cookie;
}

interface HeaderWritable {
  getHeader(name: string): number | string | string[] | undefined;
  setHeader(name: string, value: string | string[]): unknown;
}

/** Adds a Set-Cookie to a node:http (or Express) response, keeping the ones already there. */
export function appendSetCookie(res: HeaderWritable, cookie: string): void {
  const existing = res.getHeader('set-cookie');
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  res.setHeader('Set-Cookie', [...list, cookie]);
}
