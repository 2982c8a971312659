/**
 * `@affiliate-attribution/sdk/server`: referral capture in the merchant's own server, so that the
 * `svc_aff` cookie is set by the merchant's domain (`Set-Cookie`) and keeps its whole lifetime in
 * every browser; and a first-party path for the snippet. See docs/server-side-tracking.md.
 */
export { createReferralMiddleware, referralCookie, type NodeResponseLike, type NextFunction } from './middleware.js';
export {
  DEFAULT_REFERRAL_PARAM,
  DEFAULT_REFERRAL_TIMEOUT_MS,
  FALLBACK_MAX_AGE_SECONDS,
  type ReferralOptions,
  type ServerFetch,
} from './referral.js';
export {
  createFirstPartyProxy,
  DEFAULT_PROXY_PREFIX,
  VISITOR_IP_HEADER,
  type FirstPartyProxyOptions,
} from './proxy.js';
export type { ServerLogger } from './log.js';
export type { TrustProxy, NodeRequestLike, FetchRequestLike } from './visitor.js';
