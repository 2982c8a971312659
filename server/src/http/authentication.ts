import { timingSafeEqual, createHash } from 'node:crypto';
import type { OrganizationContext } from './organization-context.js';
import { ErrorMessages } from '@affiliate-attribution/contract';
import { hashApiKey, parseAuthorizationHeader } from '../modules/organizations/api-key.js';
import type { OrganizationsService } from '../modules/organizations/organizations.service.js';
import { BadRequestError, UnauthorizedError } from './errors.js';
import { MODE_HEADER, requestedLivemode } from './organization-context.js';
import type { PipelineRequest, Stage } from './pipeline.js';
import { LRUCache } from 'lru-cache';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's types declare Request in the global namespace Express: adding a field is merging into it
  namespace Express {
    interface Request {
      /** SHA-256 of the authenticated API key (merchant routes only). */
      apiKeyHash?: string;
    }
  }
}

/**
 * API key -> organization, cached for `ttlMs` so that the hot paths skip a database round trip.
 * A revoked key is refused by this instance at once, and by every other instance as soon as the
 * revocation's notification arrives (db/change-notifications.ts calls forget); ttlMs is the bound
 * when notifications are lost or not listened for: entries expire, and the next lookup finds the
 * revocation in PostgreSQL.
 */
export class ApiKeyAuthenticator {
  private readonly cache: LRUCache<string, OrganizationContext>;

  constructor(
    private readonly organizations: OrganizationsService,
    private readonly ttlMs: number,
  ) {
    // ttl 0 is lru-cache's "no expiry", but with ttlMs 0 nothing is ever stored (authenticate).
    this.cache = new LRUCache({ max: 10_000, ttl: ttlMs });
  }

  /**
   * The organization of the key in an Authorization header, and the key's hash (the per-key rate
   * limit counts by it: the plain key never leaves this module). 401 when there is no such key.
   * A cached key is answered synchronously (no promise on the busiest path).
   */
  lookup(authorization: string | undefined): ApiKeyIdentity | Promise<ApiKeyIdentity> {
    const key = parseAuthorizationHeader(authorization);
    if (!key) throw new UnauthorizedError();
    const keyHash = hashApiKey(key);
    const cached = this.cache.get(keyHash);
    if (cached) return { organization: cached, keyHash };
    return this.organizations.findByKeyHash(keyHash).then((organization) => {
      if (!organization) {
        this.cache.delete(keyHash);
        throw new UnauthorizedError();
      }
      if (this.ttlMs > 0) this.cache.set(keyHash, organization);
      return { organization, keyHash };
    });
  }

  /** Called when a key is revoked (here, or elsewhere via a change notification): it stops working here immediately. */
  forget(keyHash: string): void {
    this.cache.delete(keyHash);
  }

  /** Change notifications may have been missed (the listener reconnected): every key is checked again. */
  forgetAll(): void {
    this.cache.clear();
  }
}

export interface ApiKeyIdentity {
  organization: OrganizationContext;
  keyHash: string;
}

/** /api: the organization API key from the Authorization header, before anything else of the request is read. */
export function apiKeyStage(authenticator: ApiKeyAuthenticator): Stage {
  return {
    name: 'API key',
    paths: ['/api'],
    run(req) {
      if (req.user) return; // authenticated by a dashboard session (modules/people/session.ts)
      const found = authenticator.lookup(req.headers.authorization);
      return found instanceof Promise ? found.then((identity) => identify(req, identity)) : identify(req, found);
    },
  };
}

function identify(req: PipelineRequest, { organization, keyHash }: ApiKeyIdentity): void {
  // An API key's mode is its own; an X-Mode header that says otherwise is a client mistaken about
  // which data it writes: refused, never served in the key's mode.
  const asked = req.headers[MODE_HEADER];
  if (asked !== undefined && requestedLivemode(asked) !== organization.livemode) {
    throw new BadRequestError(
      organization.livemode
        ? 'X-Mode: test does not apply to a live API key: use a test key (svc_test_…) for test data'
        : 'X-Mode: live does not apply to a test API key: use a live key for live data',
    );
  }
  req.organization = organization;
  req.apiKeyHash = keyHash;
}

/** The operator token, compared in constant time (hashing first makes the lengths equal). */
export function adminTokenStage(adminToken: string | undefined): Stage {
  const expected = adminToken ? createHash('sha256').update(adminToken).digest() : undefined;
  return {
    name: 'admin token',
    paths: ['/admin'],
    run(req) {
      const header = req.headers.authorization ?? '';
      const presented = header.replace(/^bearer\s+/i, '').trim();
      const ok =
        expected !== undefined &&
        presented.length > 0 &&
        timingSafeEqual(createHash('sha256').update(presented).digest(), expected);
      if (!ok) throw new UnauthorizedError(ErrorMessages.invalidAdminToken);
    },
  };
}
