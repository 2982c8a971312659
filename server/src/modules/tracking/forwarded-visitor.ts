import { isIP } from 'node:net';
import type { Request, RequestHandler } from 'express';
import type { ApiKeyAuthenticator } from '../../http/authentication.js';
import { UnauthorizedError } from '../../http/errors.js';

/**
 * The header in which a first-party proxy (the SDK's `createFirstPartyProxy`, mounted in the
 * merchant's own app) passes the address of the visitor whose browser called it. Through such a
 * proxy every call comes from the merchant's server, so without it every click would carry the
 * merchant's address: one address for the click-flood rule and the per-address rate limit.
 */
export const VISITOR_IP_HEADER = 'x-visitor-ip';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's types declare Request in the global namespace Express: adding a field is merging into it
  namespace Express {
    interface Request {
      /** The visitor's address as a trusted first-party proxy forwarded it (forwardedVisitorAddress). */
      forwardedVisitorIp?: string;
    }
  }
}

/** `/organizations/<id>/...` under the public prefix: the organization the call is for. */
const ORGANIZATION_IN_PATH = /^\/organizations\/([^/]+)\//;

/**
 * Trusts `X-Visitor-IP` only from a caller holding an API key of the organization named in the
 * path. Anyone can send the header (a browser, a script), and the address decides the click
 * flood rule and the rate limit, so an unauthenticated one is ignored, never an error: the public
 * endpoint answers as it always did, from the request's own address. A key of another
 * organization is ignored too, so that one merchant's key cannot speak for another's visitors.
 * The value must be an IP address; anything else is ignored as well.
 */
export function forwardedVisitorAddress(authenticator: ApiKeyAuthenticator): RequestHandler {
  return (req, _res, next) => {
    delete req.forwardedVisitorIp;
    const header = req.headers[VISITOR_IP_HEADER];
    const address = typeof header === 'string' ? header.trim() : '';
    const organizationId = ORGANIZATION_IN_PATH.exec(req.path)?.[1];
    if (!address || isIP(address) === 0 || !organizationId || req.headers.authorization === undefined) {
      next();
      return;
    }
    // The path names the account (the live organization): its live and test keys both speak for it.
    const trust = (organization: { account_id: string }): void => {
      if (organization.account_id.toLowerCase() === organizationId.toLowerCase()) req.forwardedVisitorIp = address;
    };
    let found: ReturnType<ApiKeyAuthenticator['lookup']>;
    try {
      found = authenticator.lookup(req.headers.authorization);
    } catch (err) {
      next(err instanceof UnauthorizedError ? undefined : err);
      return;
    }
    if (!(found instanceof Promise)) {
      trust(found.organization);
      next();
      return;
    }
    found.then(
      (identity) => {
        trust(identity.organization);
        next();
      },
      (err: unknown) => next(err instanceof UnauthorizedError ? undefined : err),
    );
  };
}

/** The visitor's address for the public endpoints: a trusted proxy's forwarded one, else the request's own. */
export function visitorAddressOf(req: Request): string | undefined {
  return req.forwardedVisitorIp ?? req.ip ?? req.socket.remoteAddress;
}
