import type { AppRoute } from '@ts-rest/core';
import { ErrorBody } from './errors.js';

/**
 * Who may call a route, beside its credential. It travels with the route as ts-rest `metadata`
 * (`metadata.access`), so the server decides by the route it matched, never by the text of the
 * path (server/src/modules/people/route-access.ts), and the OpenAPI document declares the 403 with
 * the messages below.
 *
 * Two credentials can be refused, each with a message saying what they may not do:
 * - a dashboard `member`'s session (spec/ledger.md, "People": an `owner` manages everything, a
 *   `member` everything but API keys, integrations and the team; spending the merchant's money
 *   through a rail, and imports, are an owner's too);
 * - a test API key (`svc_test_…`, spec/test-mode.md): it works on test data only. Integrations,
 *   webhook endpoints and test payouts have a test twin of their own; the account's people and API
 *   keys do not, so a test key never reaches them (else a test key, handed to a developer or left
 *   in a staging config, could invite an owner or revoke the live keys).
 * The organization's live API key is the organization, and an `owner`'s session (in either mode:
 * X-Mode is the dashboard's view, not a credential) may call every route.
 */
export interface RouteAccess {
  /** A dashboard `member`'s session gets 403 with this message. */
  ownerOnly?: string;
  /** A test API key gets 403 with this message. */
  noTestKey?: string;
}

/** The team, invitations, API keys and integrations, refused to a `member`. */
export const OWNER_ONLY_MESSAGE = 'Only an owner can manage API keys, integrations and the team';

/** The account's people and keys are the live account's: refused to a test key. */
export const TEST_KEY_REFUSED_MESSAGE =
  "A test key works on test data only: it cannot manage the account's team, invitations or API keys (use a live key or an owner's session)";

/** Users, invitations and API keys: the account itself. */
export const TEAM_ACCESS: RouteAccess = { ownerOnly: OWNER_ONLY_MESSAGE, noTestKey: TEST_KEY_REFUSED_MESSAGE };

/** Provider secrets and rail credentials (a test key stores and reads its mode's own). */
export const INTEGRATIONS_ACCESS: RouteAccess = { ownerOnly: OWNER_ONLY_MESSAGE };

/** A tax form carries a taxpayer id: only an owner reads the document and decides on it. */
export const TAX_FORM_REVIEW_ACCESS: RouteAccess = { ownerOnly: 'Only an owner can read, accept and reject tax forms' };

/**
 * Sending (and retrying) payouts moves the merchant's money through the rail an owner connected:
 * a member could otherwise pay an affiliate of their own making. Creating, exporting, marking paid
 * and canceling move nothing and stay open to members.
 */
export const PAYOUT_SENDING_ACCESS: RouteAccess = { ownerOnly: 'Only an owner can send payouts' };

/** Imports write (and undo) a whole program's history with another platform's credentials. */
export const IMPORTS_ACCESS: RouteAccess = { ownerOnly: 'Only an owner can run, follow and undo imports' };

export function accessOf(route: AppRoute): RouteAccess | undefined {
  return (route.metadata as { access?: RouteAccess } | undefined)?.access;
}

/** A route a dashboard `member` may not call. */
export function isOwnerOnly(route: AppRoute): boolean {
  return accessOf(route)?.ownerOnly !== undefined;
}

/** A route a test API key may not call. */
export function refusesTestKey(route: AppRoute): boolean {
  return accessOf(route)?.noTestKey !== undefined;
}

/** The message of the 403 a refused credential gets, first of the route's rules (what the OpenAPI example shows). */
export function accessMessage(route: AppRoute): string | undefined {
  const access = accessOf(route);
  return access?.ownerOnly ?? access?.noTestKey;
}

function forbiddenResponse(access: RouteAccess, existing: unknown): typeof ErrorBody {
  const refused = [
    access.ownerOnly && `a dashboard \`member\`'s session ("${access.ownerOnly}")`,
    access.noTestKey && `a test API key ("${access.noTestKey}")`,
  ].filter(Boolean);
  const own = (existing as { description?: string } | undefined)?.description;
  const text = `Refused to ${refused.join(' and to ')}.`;
  return ErrorBody.describe(
    own ? `${own.replace(/\.$/, '')}; or refused to this credential: ${text.slice('Refused to '.length)}` : text,
  );
}

type Restricted<R> = R extends AppRoute ? R & { responses: R['responses'] & { 403: typeof ErrorBody } } : R;

/**
 * A route with an access rule: it carries the rule in `metadata.access` and declares the 403,
 * beside its own 403 (another organization's row) if it has one.
 */
export function restrictedRoute<R extends AppRoute>(access: RouteAccess, route: R): Restricted<R> {
  return {
    ...route,
    metadata: { ...(route.metadata as object | undefined), access },
    responses: {
      ...route.responses,
      403: forbiddenResponse(access, (route.responses as Record<number, unknown>)[403]),
    },
  } as Restricted<R>;
}

/** Every route of a router with one access rule: `c.router(restricted(IMPORTS_ACCESS, { ... }))`. */
export function restricted<T extends Record<string, AppRoute>>(
  access: RouteAccess,
  routes: T,
): { [K in keyof T]: Restricted<T[K]> } {
  return Object.fromEntries(Object.entries(routes).map(([name, route]) => [name, restrictedRoute(access, route)])) as {
    [K in keyof T]: Restricted<T[K]>;
  };
}
