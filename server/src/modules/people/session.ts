import type { IncomingHttpHeaders } from 'node:http';
import { fromNodeHeaders } from 'better-auth/node';
import { LRUCache } from 'lru-cache';
import { ForbiddenError } from '../../http/errors.js';
import { MODE_HEADER, requestedLivemode, type OrganizationContext } from '../../http/organization-context.js';
import type { PipelineRequest, Stage } from '../../http/pipeline.js';
import { AUTH_COOKIE_PREFIX, type Auth } from './auth.js';
import type { PeopleRepository, Role } from './people.repository.js';

/** The person behind a dashboard request (a browser session), beside the organization. */
export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}

declare module '../../http/pipeline.js' {
  interface PipelineRequest {
    /** Set when the request is authenticated by a dashboard session rather than an API key. */
    user?: SessionUser;
  }
}
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's types declare Request in the global namespace Express: adding a field is merging into it
  namespace Express {
    interface Request {
      /** Set when the request is authenticated by a dashboard session rather than an API key. */
      user?: SessionUser;
    }
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const SESSION_COOKIE = `${AUTH_COOKIE_PREFIX}.session_token=`;

/**
 * One contract, two credentials: a request to /api without an Authorization header but with a
 * dashboard session cookie is authenticated by the session (better-auth checks the cookie's
 * signature and finds the session in PostgreSQL), as the user's organization. Requests with an
 * Authorization header never look at cookies: API-key callers are served exactly as before, by the
 * API key stage that follows (http/authentication.ts), which leaves session requests alone.
 *
 * CSRF: the cookie is SameSite=Lax, so other sites' forms and scripts do not send it with a POST;
 * on top of that, a state-changing request on a session must come from the service's own origin
 * (`Origin`, which browsers set on every such request and pages cannot forge), else 403.
 */
export function sessionStage(deps: {
  auth: Auth;
  people: PeopleRepository;
  organizations: SessionOrganizations;
  publicBaseUrl: string;
}): Stage {
  const organizations = new LRUCache<string, OrganizationContext>({ max: 10_000, ttl: 60_000 });
  const publicOrigin = new URL(deps.publicBaseUrl).origin;

  async function organizationOf(id: string, livemode: boolean): Promise<OrganizationContext | undefined> {
    const key = `${livemode ? 'live' : 'test'}:${id}`;
    const cached = organizations.get(key);
    if (cached) return cached;
    const organization = await deps.organizations.contextOf(id, livemode);
    if (organization === undefined) return undefined;
    organizations.set(key, organization);
    return organization;
  }

  async function authenticate(req: PipelineRequest, livemode: boolean): Promise<void> {
    const found = await deps.auth.api.getSession({ headers: fromNodeHeaders(req.headers) });
    if (!found) return; // no valid session: the API key stage answers 401 as for any request without a key
    const user = found.user as typeof found.user & { organizationId: string; role: Role };
    const organization = await organizationOf(user.organizationId, livemode);
    if (!organization) return;
    req.organization = organization;
    // What the role may do is decided once the route is matched (route-access.ts), not here.
    req.user = { id: user.id, email: user.email, name: user.name, role: user.role };
  }

  return {
    name: 'session',
    paths: ['/api'],
    // The hot lane hands session requests to Express (hot-routes.ts, isPlainRequest).
    needed: () => false,
    run(req) {
      if (req.headers.authorization !== undefined) return;
      if (!req.headers.cookie?.includes(SESSION_COOKIE)) return;
      if (!SAFE_METHODS.has(req.method ?? 'GET') && !sameOrigin(req.headers, publicOrigin)) {
        throw new ForbiddenError('Cross-site request refused: a dashboard session only works from the dashboard');
      }
      return authenticate(req, requestedLivemode(req.headers[MODE_HEADER]));
    },
  };
}

/** What the session stage needs of the organizations module: the live organization or its twin. */
export interface SessionOrganizations {
  contextOf(liveOrganizationId: string, livemode: boolean): Promise<OrganizationContext | undefined>;
}

/** Whether a request comes from the service's own pages (its Origin, else Sec-Fetch-Site). */
export function sameOrigin(headers: IncomingHttpHeaders, publicOrigin: string | undefined): boolean {
  const origin = headers.origin;
  if (origin === undefined) return headers['sec-fetch-site'] === 'same-origin';
  if (origin === publicOrigin) return true;
  try {
    return new URL(origin).host === headers.host;
  } catch {
    return false;
  }
}
