import { warner } from './log.js';
import { mayCarryReferral } from './link-params.js';
import { referralCapture, type ReferralOptions } from './referral.js';
import { appendSetCookie } from './set-cookie.js';
import { fetchVisit, nodeVisit, type FetchRequestLike, type NodeRequestLike } from './visitor.js';

/** A node:http (Express, Connect) response: only what the middleware touches. */
export interface NodeResponseLike {
  headersSent?: boolean;
  getHeader(name: string): number | string | string[] | undefined;
  setHeader(name: string, value: string | string[]): unknown;
}

export type NextFunction = (err?: unknown) => void;

/**
 * Server-side referral capture for Express, Connect and plain node:http:
 *
 * ```ts
 * app.use(createReferralMiddleware({ apiKey: process.env.AFFILIATE_API_KEY!, baseUrl: 'https://affiliates.example.com' }));
 * ```
 *
 * On a GET whose query has one of the organization's link parameters (`ref`, and e.g. `via`
 * after a Rewardful import: learned from the service), from a visitor that is not a bot, it records
 * the click (POST /api/clicks with the visitor's address, user agent, landing URL, referrer and
 * current cookie) and adds `Set-Cookie: svc_aff=…` with the program's lifetime to the page's
 * response, then calls `next()`. It waits at most `timeoutMs` (default 500); when the service is
 * slow, down or failing the cookie holds the raw slug. It never passes an error to `next`.
 */
export function createReferralMiddleware(
  options: ReferralOptions,
): (req: NodeRequestLike, res: NodeResponseLike, next: NextFunction) => void {
  const capture = referralCapture(options);
  return function referralMiddleware(req, res, next) {
    let visit;
    try {
      // A referral link is followed by a GET; HEAD is a link checker or a previewer, not a visit.
      if (req.method !== 'GET' && req.method !== undefined) return next();
      visit = nodeVisit(req, capture.trustProxy);
      if (!capture.hasReferral(visit)) return next();
    } catch {
      return next(); // an unparsable URL or Host: not a referral this middleware can read
    }
    capture.setCookieFor(visit).then(
      (cookie) => {
        if (cookie && !res.headersSent) appendSetCookie(res, cookie);
        next();
      },
      () => next(),
    );
  };
}

/**
 * The same for Fetch-style frameworks (Next.js middleware, Hono, Remix): resolves to the
 * `Set-Cookie` value to add to the response, or undefined (no referral, a bot, an unknown slug).
 * Never rejects; resolves within `timeoutMs`.
 *
 * ```ts
 * const cookie = await referralCookie(request, { apiKey, baseUrl, trustProxy: true });
 * if (cookie) response.headers.append('Set-Cookie', cookie);
 * ```
 *
 * In these runtimes there is no connection to read the visitor's address from: pass `ip`, or
 * `trustProxy` when the platform writes `X-Forwarded-For` (Vercel, Netlify, Cloudflare, a load
 * balancer).
 */
export async function referralCookie(
  request: FetchRequestLike,
  options: ReferralOptions & { ip?: string },
): Promise<string | undefined> {
  let visit;
  try {
    if (request.method !== undefined && request.method !== 'GET') return undefined;
    visit = fetchVisit(request, options?.trustProxy ?? false, options?.ip);
  } catch {
    return undefined;
  }
  // Most pages carry no referral: they cost nothing, not even a client.
  if (!mayCarryReferral(visit.url, options?.param)) return undefined;
  let capture;
  try {
    capture = referralCapture(options);
  } catch (err) {
    // Misconfigured (no key in this deployment, say): said, and the page is served as it is.
    warner(options?.logger).warn('options', `referralCookie: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
  if (!capture.hasReferral(visit)) return undefined;
  return capture.setCookieFor(visit).catch(() => undefined);
}
