/**
 * What the server helpers need to know about the visitor's request, read from a node:http
 * request or a Fetch `Request`. The visitor's address and scheme come from the connection,
 * unless `trustProxy` says a proxy in front of the app (a load balancer, a CDN, Vercel) writes
 * them in `X-Forwarded-For` / `X-Forwarded-Proto`: headers anyone can send, so they are read only
 * when the merchant says so.
 */
export interface Visit {
  url: URL;
  userAgent?: string;
  ip?: string;
  referrer?: string;
  cookieHeader?: string;
  secure: boolean;
}

/**
 * `true`: the left-most `X-Forwarded-For` address (the client as the first proxy saw it; only
 * safe when that proxy overwrites the header). A number: that many proxies in front of the app,
 * whose own addresses are the right-most entries (Express's `trust proxy` with a hop count).
 */
export type TrustProxy = boolean | number;

type NodeHeaders = Record<string, string | string[] | undefined>;

export interface NodeRequestLike {
  method?: string;
  url?: string;
  originalUrl?: string;
  headers: NodeHeaders;
  socket?: { remoteAddress?: string; encrypted?: boolean } | null;
}

interface FetchRequestLike {
  url: string;
  method?: string;
  headers: { get(name: string): string | null };
  /** Set by some frameworks (Next.js before 15 on Vercel). */
  ip?: string;
}

/** IPv4, IPv6 (with an optional zone) or IPv4-mapped IPv6: what the clicks API's `ip` takes. */
const IP_ADDRESS = /^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f:]*:[0-9a-f:.]*(?:%[\w.-]+)?)$/i;

export function ipAddressOrUndefined(value: string | undefined): string | undefined {
  const v = value?.trim().replace(/^\[(.*)\]$/, '$1');
  return v && v.length <= 64 && IP_ADDRESS.test(v) ? v : undefined;
}

function first(value: string | string[] | undefined | null): string | undefined {
  return Array.isArray(value) ? value[0] : (value ?? undefined);
}

/** The client's address from X-Forwarded-For (all its headers joined) and the connection's own. */
export function forwardedAddress(
  forwardedFor: string | undefined,
  socketAddress: string | undefined,
  trust: TrustProxy,
): string | undefined {
  if (trust === false || trust === 0) return ipAddressOrUndefined(socketAddress);
  const chain = (forwardedFor ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  if (socketAddress) chain.push(socketAddress);
  if (chain.length === 0) return undefined;
  if (trust === true) return ipAddressOrUndefined(chain[0]);
  // Without a connection (Fetch-style runtimes) the platform's own proxy is the first hop trusted.
  const hopsToSkip = socketAddress ? trust : trust - 1;
  return ipAddressOrUndefined(chain[Math.max(0, chain.length - 1 - hopsToSkip)]);
}

function forwardedProtoIsHttps(value: string | undefined): boolean {
  return value?.split(',')[0]?.trim().toLowerCase() === 'https';
}

const joined = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value.join(', ') : value;

export function nodeVisit(req: NodeRequestLike, trust: TrustProxy): Visit {
  const h = req.headers;
  const trusted = trust !== false && trust !== 0;
  const secure = req.socket?.encrypted === true || (trusted && forwardedProtoIsHttps(joined(h['x-forwarded-proto'])));
  const host = (trusted && first(h['x-forwarded-host'])?.split(',')[0]?.trim()) || first(h.host) || 'localhost';
  return {
    url: new URL(req.originalUrl ?? req.url ?? '/', `${secure ? 'https' : 'http'}://${host}`),
    userAgent: first(h['user-agent']),
    ip: forwardedAddress(joined(h['x-forwarded-for']), req.socket?.remoteAddress, trust),
    referrer: first(h.referer),
    cookieHeader: Array.isArray(h.cookie) ? h.cookie.join('; ') : h.cookie,
    secure,
  };
}

export function fetchVisit(request: FetchRequestLike, trust: TrustProxy, ip: string | undefined): Visit {
  const h = request.headers;
  const url = new URL(request.url);
  const trusted = trust !== false && trust !== 0;
  return {
    url,
    userAgent: h.get('user-agent') ?? undefined,
    // No socket here: the address is the caller's `ip`, a trusted X-Forwarded-For, or the framework's.
    ip:
      ipAddressOrUndefined(ip) ??
      (trusted
        ? forwardedAddress(h.get('x-forwarded-for') ?? undefined, undefined, trust)
        : ipAddressOrUndefined(request.ip)),
    referrer: h.get('referer') ?? undefined,
    cookieHeader: h.get('cookie') ?? undefined,
    secure: url.protocol === 'https:' || (trusted && forwardedProtoIsHttps(h.get('x-forwarded-proto') ?? undefined)),
  };
}

export type { FetchRequestLike };
