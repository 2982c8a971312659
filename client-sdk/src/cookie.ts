/** The first-party cookie in which the tracking snippet stores the attribution (cookie id or slug). */
export const ATTRIBUTION_COOKIE = 'svc_aff';

interface HeadersLike {
  get(name: string): string | null;
}

type NodeHeaders = Record<string, string | string[] | undefined>;

/**
 * Anything a backend has at hand that carries cookies: a Node `IncomingMessage`, an Express (or
 * Koa, Fastify) request, a Fetch `Request` (Next.js, Hono, Remix...), a `Headers` object, or the
 * raw `Cookie` header value.
 */
export type CookieSource =
  string | null | undefined | HeadersLike | { headers: HeadersLike | NodeHeaders; cookies?: unknown };

function cookieHeader(source: CookieSource): string | undefined {
  if (source === null || source === undefined) return undefined;
  if (typeof source === 'string') return source;
  if ('get' in source && typeof source.get === 'function') return source.get('cookie') ?? undefined;
  if (!('headers' in source) || !source.headers) return undefined;
  const headers = source.headers;
  if (typeof (headers as HeadersLike).get === 'function') return (headers as HeadersLike).get('cookie') ?? undefined;
  const value = (headers as NodeHeaders).cookie ?? (headers as NodeHeaders).Cookie;
  return Array.isArray(value) ? value.join('; ') : value;
}

function decode(value: string): string {
  let v = value.trim();
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/**
 * The value of the `svc_aff` cookie of an incoming request, to pass as `cookie_id`; undefined
 * when the visitor has none.
 *
 * ```ts
 * await client.customers.create({ customer_id: user.stripeId, cookie_id: getCookieId(req) });
 * ```
 */
export function getCookieId(source: CookieSource, name: string = ATTRIBUTION_COOKIE): string | undefined {
  // Express with cookie-parser (or any framework that parsed the cookies already).
  if (source && typeof source === 'object' && 'cookies' in source) {
    const cookies = source.cookies as Record<string, unknown> | null | undefined;
    const parsed = cookies && typeof cookies === 'object' ? cookies[name] : undefined;
    if (typeof parsed === 'string' && parsed !== '') return parsed;
  }
  const header = cookieHeader(source);
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    const value = decode(part.slice(eq + 1));
    if (value !== '') return value;
  }
  return undefined;
}
