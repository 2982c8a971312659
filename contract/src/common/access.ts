import type { AppRoute } from '@ts-rest/core';
import { ErrorBody } from './errors.js';

/**
 * Who may call a route, beside its credential (spec/ledger.md, "People": an `owner` manages
 * everything, a `member` everything but API keys, integrations and the team). It travels with the
 * route as ts-rest `metadata`, so the server decides by the route it matched, never by the text of
 * the path (server/src/modules/people/route-access.ts), and the OpenAPI document declares the 403.
 */
export interface RouteAccess {
  /** Only an `owner` (or the organization's API key) may call it; a dashboard `member` gets 403. */
  ownerOnly?: true;
}

/** The answer of an owner-only route to a `member`'s session. */
export const OWNER_ONLY_MESSAGE = 'Only an owner can manage API keys, integrations and the team';

const ownerOnlyError = ErrorBody.describe('A dashboard `member` may not do this: only an `owner` manages API keys, integrations and the team.');

/**
 * Router options (`c.router(routes, OWNER_ONLY)`): every route of the router, those added later
 * included, is owner-only and declares the member's 403.
 */
export const OWNER_ONLY = {
  metadata: { ownerOnly: true } satisfies RouteAccess,
  commonResponses: { 403: ownerOnlyError },
} as const;

export function isOwnerOnly(route: AppRoute): boolean {
  return (route.metadata as RouteAccess | undefined)?.ownerOnly === true;
}
