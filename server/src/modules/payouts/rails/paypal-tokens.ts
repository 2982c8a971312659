import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { PayPalCredentials } from '../../integrations/integrations.service.js';

/** An access token as PayPal's token endpoint answers it (POST /v1/oauth2/token: `access_token`, `expires_in` in seconds). */
export interface IssuedToken {
  value: string;
  expiresInSeconds: number;
}

/**
 * A token is given up this long before PayPal says it expires, so that a call never leaves with a
 * token that expires on the way (PayPal's tokens live 9 hours; this is under a percent of that).
 */
export const TOKEN_EXPIRY_MARGIN_SECONDS = 60;

interface Entry {
  /** Which credentials the token was issued for (a digest: the secret itself is not kept here). */
  fingerprint: string;
  value?: string;
  expiresAt: number;
  /** A token request on the way: callers arriving meanwhile wait for it rather than asking PayPal again. */
  pending?: Promise<string>;
}

/** Where a token is valid: one organization's credentials, for one environment, at one API base. */
export interface TokenScope {
  organizationId: string;
  base: string;
  credentials: Pick<PayPalCredentials, 'client_id' | 'client_secret' | 'environment'>;
}

/**
 * The instance's PayPal access tokens, one per organization, environment and API base, shared by
 * everything that calls PayPal for that organization (sending, the reconciliation, verifying
 * webhooks), and reused until shortly before `expires_in` runs out. Without it every call paid for
 * a token request with the merchant's credentials, which any unauthenticated webhook could trigger.
 * PayPal answers a token with the number of seconds it is valid (`expires_in`) and means it to be
 * used until then (https://developer.paypal.com/api/rest/authentication/).
 *
 * A token is forgotten when the credentials it was issued for are no longer the integration's
 * (their digest differs: a rotated secret, another client), when PayPal answers 401 with it
 * (`invalidate`), and when it expires. Concurrent requests for a missing token make one token call.
 * Bounded: the least recently used organizations' tokens are dropped first.
 */
export class PayPalTokens {
  private readonly entries: LRUCache<string, Entry>;

  constructor(
    options: { maxOrganizations?: number } = {},
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new LRUCache({ max: options.maxOrganizations ?? 10_000 });
  }

  /** A valid token for the scope: the one held, else one `issue` obtains (once, however many callers wait). */
  token(scope: TokenScope, issue: () => Promise<IssuedToken>): Promise<string> {
    const key = keyOf(scope);
    const fingerprint = fingerprintOf(scope);
    const held = this.entries.get(key);
    if (held && held.fingerprint === fingerprint) {
      if (held.value !== undefined && held.expiresAt > this.now()) return Promise.resolve(held.value);
      if (held.pending) return held.pending;
    }
    const entry: Entry = { fingerprint, expiresAt: 0 };
    entry.pending = issue().then(
      (issued) => {
        entry.pending = undefined;
        entry.value = issued.value;
        entry.expiresAt = this.now() + Math.max(0, issued.expiresInSeconds - TOKEN_EXPIRY_MARGIN_SECONDS) * 1000;
        return issued.value;
      },
      (err: unknown) => {
        // Nothing kept: the next call asks again (wrong credentials are PayPal's to say each time).
        if (this.entries.get(key) === entry) this.entries.delete(key);
        throw err;
      },
    );
    this.entries.set(key, entry);
    return entry.pending;
  }

  /** PayPal refused this token (401): forgotten, unless a newer one has already replaced it. */
  invalidate(scope: TokenScope, value: string): void {
    const key = keyOf(scope);
    if (this.entries.get(key)?.value === value) this.entries.delete(key);
  }

  /** Organizations holding a token or a token request (tests). */
  get size(): number {
    return this.entries.size;
  }
}

const keyOf = (scope: TokenScope) => `${scope.organizationId}|${scope.credentials.environment}|${scope.base}`;

const fingerprintOf = (scope: TokenScope) =>
  createHash('sha256')
    .update(`${scope.credentials.client_id}\u0000${scope.credentials.client_secret}`)
    .digest('base64url');
