/**
 * One visit, one click. A merchant may capture a referral twice in one visit: the server middleware
 * on a page that also loads the snippet (both see `?ref=`), the snippet on a static landing page and
 * the middleware on the next page that keeps the query, or a reload. Each capture sends the
 * visitor's `svc_aff` cookie, and the first one set it to its click's `cookie_id`; so a capture
 * whose cookie is a click of the same affiliate, made moments before, is that visit again, and
 * answers that click instead of recording another.
 *
 * The window is the one web analytics call a session (30 minutes without activity): long enough
 * for the second capture of any visit, short enough that a visitor who comes back later through
 * the link is counted again. A different affiliate's link is always a new click (last click wins).
 */
export const SAME_VISIT_WINDOW_MS = 30 * 60_000;

export interface VisitClick {
  affiliate_id: string;
  occurred_at: Date;
}

/** Whether a capture for `affiliateId` at `at`, carrying the cookie of `earlier`, is the visit `earlier` recorded. */
export function isSameVisit(earlier: VisitClick | undefined, affiliateId: string, at: Date): boolean {
  if (!earlier || earlier.affiliate_id !== affiliateId) return false;
  // Either way round: captures of one visit reach the service within moments, whichever first.
  return Math.abs(at.getTime() - earlier.occurred_at.getTime()) <= SAME_VISIT_WINDOW_MS;
}
