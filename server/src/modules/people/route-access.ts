import type { AppRoute } from '@ts-rest/core';
import { isOwnerOnly, OWNER_ONLY_MESSAGE } from '@affiliate-attribution/contract';
import { ForbiddenError } from '../../http/errors.js';
import type { PipelineRequest } from '../../http/pipeline.js';
import type { MatchedRouteMiddleware } from '../../http/router-types.js';

/**
 * The roles' rule (spec/ledger.md, "People"), decided by the contract route Express matched, never
 * by the text of the path: a route the contract marks owner-only (contract/src/common/access.ts)
 * answers only the organization's API key or an `owner`'s session. Any other credential, a
 * `member`'s session included, gets 403, whatever the spelling that reached the route.
 */
export function assertRouteAccess(route: AppRoute, req: Pick<PipelineRequest, 'apiKeyHash' | 'user'>): void {
  if (!isOwnerOnly(route)) return;
  if (req.apiKeyHash !== undefined || req.user?.role === 'owner') return;
  throw new ForbiddenError(OWNER_ONLY_MESSAGE);
}

/**
 * ts-rest's `globalMiddleware` (app.ts passes it with every router): it runs once ts-rest has
 * matched the route (`req.tsRestRoute`), after the request pipeline authenticated the request and
 * before the route's input is validated or its handler runs.
 */
export const routeAccess: MatchedRouteMiddleware = (req, _res, next) => {
  try {
    assertRouteAccess(req.tsRestRoute, req);
    next();
  } catch (err) {
    next(err);
  }
};
