import type { RequestHandler, Response } from 'express';
import { parseCookie, stringifySetCookie } from 'cookie';
import { ForbiddenError, UnauthorizedError } from '../../http/errors.js';
import { sameOrigin } from '../people/session.js';
import { PARTNER_SESSION_DAYS, type PartnerSession, type PartnersService } from './partners.service.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's types declare Request in the global namespace Express: adding a field is merging into it
  namespace Express {
    interface Request {
      /** Set on /partner/api when the request carries a valid partner session. */
      partner?: PartnerSession;
    }
  }
}

/** Where the partner API lives: the session cookie is sent to these paths only. */
export const PARTNER_API = '/partner/api';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The partner session cookie: HttpOnly (no script reads it), SameSite=Lax (other sites' forms and
 * scripts do not carry it on a POST), scoped to the partner API's path, Secure (and
 * `__Secure-`-prefixed) behind HTTPS. Its value is `<organization id>.<token>`: the session is
 * found by both, and the token is stored only as its SHA-256.
 */
export class PartnerCookie {
  readonly name: string;
  private readonly secure: boolean;

  constructor(publicBaseUrl: string) {
    this.secure = publicBaseUrl.startsWith('https:');
    this.name = `${this.secure ? '__Secure-' : ''}svc.partner_session`;
  }

  read(header: string | undefined): { organizationId: string; token: string } | undefined {
    if (!header?.includes(this.name)) return undefined;
    const value = parseCookie(header)[this.name];
    const dot = value?.indexOf('.') ?? -1;
    if (!value || dot < 1) return undefined;
    return { organizationId: value.slice(0, dot), token: value.slice(dot + 1) };
  }

  set(res: Response, session: PartnerSession, token: string): void {
    res.append(
      'Set-Cookie',
      stringifySetCookie({
        name: this.name,
        value: `${session.organizationId}.${token}`,
        httpOnly: true,
        sameSite: 'lax',
        secure: this.secure,
        path: PARTNER_API,
        maxAge: PARTNER_SESSION_DAYS * 86_400,
      }),
    );
  }

  clear(res: Response): void {
    res.append(
      'Set-Cookie',
      stringifySetCookie({
        name: this.name,
        value: '',
        httpOnly: true,
        sameSite: 'lax',
        secure: this.secure,
        path: PARTNER_API,
        maxAge: 0,
      }),
    );
  }
}

/**
 * Authentication for /partner/api, before any body is read: the session behind the cookie
 * (renewed daily while used), and 401 on the routes that need one (`protectedPaths`).
 */
export function partnerSessionMiddleware(deps: {
  partners: PartnersService;
  cookie: PartnerCookie;
  protectedPaths: ReadonlySet<string>;
}): RequestHandler {
  return (req, res, next) => {
    const found = deps.cookie.read(req.headers.cookie);
    const lookup = found ? deps.partners.session(found.organizationId, found.token) : Promise.resolve(undefined);
    lookup
      .then((result) => {
        if (result && found) {
          req.partner = result.session;
          req.livemode = result.session.livemode;
          if (result.renewed) deps.cookie.set(res, result.session, found.token);
        }
        if (!req.partner && deps.protectedPaths.has(`${PARTNER_API}${req.path}`))
          throw new UnauthorizedError('Not signed in to the partner portal');
        next();
      })
      .catch(next);
  };
}

/**
 * CSRF: every state-changing /partner/api request must come from the service's own origin
 * (`Origin`, else `Sec-Fetch-Site: same-origin`), else 403, as for the dashboard
 * (modules/people/session.ts). After the body rules, so a malformed request is told what is wrong with it.
 */
export function partnerSameOrigin(publicBaseUrl: string): RequestHandler {
  const publicOrigin = new URL(publicBaseUrl).origin;
  return (req, _res, next) => {
    next(
      SAFE_METHODS.has(req.method) || sameOrigin(req.headers, publicOrigin)
        ? undefined
        : new ForbiddenError('Cross-site request refused: the partner portal only works from its own pages'),
    );
  };
}

export function requirePartner(req: { partner?: PartnerSession }): PartnerSession {
  if (!req.partner) throw new UnauthorizedError('Not signed in to the partner portal');
  return req.partner;
}
