import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { type SecurityRequirementObject, type TagObject } from 'openapi3-ts/oas30';
import { partnerContract } from '@affiliate-attribution/contract';

/**
 * The contract's routes as the document lists them: their operation ids, tags and security.
 */

export const SECURITY_SCHEMES = {
  ApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      'The organization API key, sent as `Authorization: svc-<key>`. It scopes every request to its organization. It is a server-side credential: never put it in a browser, a mobile app or a public repository.',
  },
  ApiKeyBearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'svc-<key>',
    description: 'The same organization API key in the bearer form: `Authorization: Bearer svc-<key>`.',
  },
  PartnerSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'svc.partner_session',
    description:
      "A partner portal session: the HttpOnly cookie `POST /partner/api/sign-in` sets (`__Secure-svc.partner_session` over HTTPS). Only for `/partner/api/*`; state-changing requests must also come from the service's own origin (`Origin`).",
  },
  AdminToken: {
    type: 'http',
    scheme: 'bearer',
    description:
      'The operator token (`ADMIN_TOKEN` of the service): `Authorization: Bearer <ADMIN_TOKEN>`. Only for `/admin/*`; unset, every `/admin/*` call answers 401.',
  },
} as const;

export type SecurityKind = 'apiKey' | 'admin' | 'partner' | 'public';

export const SECURITY: Record<SecurityKind, SecurityRequirementObject[]> = {
  apiKey: [{ ApiKey: [] }, { ApiKeyBearer: [] }],
  admin: [{ AdminToken: [] }],
  partner: [{ PartnerSession: [] }],
  public: [],
};

// Tags: one per top-level router of the contract.

export const TAGS: Record<string, { name: string; description: string }> = {
  me: { name: 'Organization', description: 'The organization an API key belongs to; an authenticated health check.' },
  programs: {
    name: 'Programs',
    description: 'Affiliate programs: the commission rule, the click attribution window and the commission window.',
  },
  affiliates: {
    name: 'Affiliates',
    description:
      'Partners in a program, identified by (e-mail, program), each with a referral slug for `?ref=<slug>` links.',
  },
  clicks: {
    name: 'Clicks',
    description:
      'Clicks on referral links registered server-side; they issue the `cookie_id` and click id used for attribution.',
  },
  customers: {
    name: 'Customers',
    description:
      "The merchant's customers, tied for life to the affiliate and program of the click they signed up with.",
  },
  conversions: {
    name: 'Conversions',
    description: 'Sales: initial ones attributed by click, recurring ones by customer, each with its commission.',
  },
  integrations: {
    name: 'Integrations',
    description: 'Payment-provider integrations: the signing secret the service verifies provider webhooks with.',
  },
  tracking: {
    name: 'Tracking',
    description:
      'Public endpoints of the browser tracking snippet (`/snippet.js`). No API key: they take the public organization id.',
  },
  webhooks: {
    name: 'Webhooks',
    description:
      'Inbound payment-provider webhooks. The provider posts its events here; each is verified with the signing secret of the integration before anything is recorded.',
  },
  partnerPublic: {
    name: 'Partner portal: joining',
    description:
      "A program's public join page, slug checks, applications and partners' sign-in by e-mailed link. No credential.",
  },
  partner: {
    name: 'Partner portal',
    description:
      'What a signed-in partner sees of their own memberships: links, activity, masked customers, commissions, payouts. The partner session cookie, never an API key.',
  },
  partnerInvitations: {
    name: 'Partner invitations',
    description: 'Inviting an affiliate to the partner portal by e-mail.',
  },
  admin: {
    name: 'Operator',
    description: 'Platform operator endpoints (organizations and their API keys), authenticated by the operator token.',
  },
};

export function tagFor(routerKey: string, routes: RouteEntry[]): TagObject {
  const known = TAGS[routerKey];
  if (known) return { ...known };
  const name = routerKey.charAt(0).toUpperCase() + routerKey.slice(1);
  const summaries = routes
    .filter((r) => r.keyPath[0] === routerKey)
    .map((r) => r.route.summary ?? `${r.route.method} ${r.route.path}`);
  return { name, description: `${summaries.join('. ')}.` };
}

// Routes

export interface RouteEntry {
  keyPath: string[];
  route: AppRoute;
  oasPath: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
}

export function collectRoutes(router: AppRouter, prefix: string[] = []): RouteEntry[] {
  const out: RouteEntry[] = [];
  for (const [key, value] of Object.entries(router)) {
    if (isAppRoute(value)) {
      out.push({
        keyPath: [...prefix, key],
        route: value,
        oasPath: value.path.replace(/:(\w+)/g, '{$1}'),
        method: value.method.toLowerCase() as RouteEntry['method'],
      });
    } else {
      out.push(...collectRoutes(value, [...prefix, key]));
    }
  }
  return out;
}

export function operationIdOf(keyPath: string[]): string {
  return keyPath.map((part, i) => (i === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1))).join('');
}

/**
 * Who may call a route: `/admin/*` takes the operator token; the merchant routes (the routes of
 * `merchantContract`, mounted behind the API-key middleware) take the API key; anything else in
 * the contract (the snippet's tracking endpoints, provider webhooks) is public at the HTTP level.
 * test/openapi/security.test.ts holds the server to this: a secured operation answers 401
 * without credentials, a public one does not.
 */
/** The routes a partner session reaches (contract.partner). */
const partnerRoutes = new Set(Object.values(partnerContract).map((route) => `${route.method} ${route.path}`));

export function securityKindOf(route: AppRoute, merchantRoutes: Set<string>): SecurityKind {
  if (route.path === '/admin' || route.path.startsWith('/admin/')) return 'admin';
  if (merchantRoutes.has(`${route.method} ${route.path}`)) return 'apiKey';
  if (partnerRoutes.has(`${route.method} ${route.path}`)) return 'partner';
  return 'public';
}
