import type { AppRoute } from '@ts-rest/core';
import { accessOf } from '@affiliate-attribution/contract';
import { ForbiddenError } from '../../http/errors.js';
import type { PipelineRequest } from '../../http/pipeline.js';
import type { MatchedRouteMiddleware } from '../../http/router-types.js';

/**
 * The access rule (contract/src/common/access.ts), decided by the contract route Express matched,
 * never by the text of the path, whatever the spelling that reached the route:
 * - a route marked `ownerOnly` answers a `member`'s session 403 with its message;
 * - a route marked `noTestKey` answers a test API key 403 with its message (the key's mode is the
 *   request's: `organization.livemode` is false for a test key, authentication.ts);
 * the organization's live API key and an `owner`'s session pass both.
 */
export function assertRouteAccess(
  route: AppRoute,
  req: Pick<PipelineRequest, 'apiKeyHash' | 'user' | 'organization'>,
): void {
  const access = accessOf(route);
  if (!access) return;
  if (req.apiKeyHash !== undefined) {
    if (access.noTestKey !== undefined && req.organization?.livemode === false)
      throw new ForbiddenError(access.noTestKey);
    return;
  }
  if (access.ownerOnly !== undefined && req.user?.role !== 'owner') throw new ForbiddenError(access.ownerOnly);
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
