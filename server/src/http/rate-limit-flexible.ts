import { LRUCache } from 'lru-cache';
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitDecision, RateLimiter } from './rate-limit.js';

/**
 * Our RateLimiter on top of rate-limiter-flexible. Its limiters count `points` per key in a
 * fixed window of `duration` seconds that starts at the key's first request; `consume` resolves
 * while the key is within its points and rejects with a RateLimiterRes once it is over. Any other
 * rejection is the store failing with no insurance limiter to take over; rateLimitStage
 * (rate-limit.ts) then lets the request through.
 */

const UNLIMITED: RateLimitDecision = { allowed: true, limit: 0, remaining: 0, retryAfterSeconds: 0 };

function refused(limit: number, msBeforeNext: number): RateLimitDecision {
  return { allowed: false, limit, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)) };
}

/** One store operation per request: right for memory, where an operation costs nothing. */
export class PerRequestRateLimiter implements RateLimiter {
  constructor(
    private readonly limiter: RateLimiterAbstract,
    readonly limit: number,
  ) {}

  async hit(key: string): Promise<RateLimitDecision> {
    if (this.limit === 0) return UNLIMITED;
    try {
      const res = await this.limiter.consume(key);
      return { allowed: true, limit: this.limit, remaining: res.remainingPoints, retryAfterSeconds: 0 };
    } catch (err) {
      if (err instanceof RateLimiterRes) return refused(this.limit, err.msBeforeNext);
      throw err;
    }
  }
}

/** Requests per window and key, counted in this instance's memory. `limit` 0 disables limiting. */
export function memoryRateLimiter(options: {
  limit: number;
  windowSeconds: number;
  prefix?: string;
}): PerRequestRateLimiter {
  checkOptions(options);
  const limiter = new RateLimiterMemory({
    points: Math.max(1, options.limit),
    duration: options.windowSeconds,
    keyPrefix: options.prefix ?? 'svc:rl',
  });
  return new PerRequestRateLimiter(limiter, options.limit);
}

export function checkOptions({ limit, windowSeconds }: { limit: number; windowSeconds: number }): void {
  if (!(windowSeconds > 0)) throw new Error('rate limit window must be positive');
  if (!(limit >= 0) || !Number.isInteger(limit)) throw new Error('rate limit must be an integer >= 0');
}

/** At most this share of a key's budget is leased to one instance at a time. */
export const LEASE_SHARE = 1 / 1000;

interface Lease {
  /** Requests this instance may still admit from its lease. */
  left: number;
  /** What the shared store had left for every instance when this lease was taken. */
  othersLeft: number;
  /** End of the store's window (this instance's clock): the lease is void after it. */
  expiresAt: number;
  /** The store refused more: nothing left for anyone until expiresAt. */
  exhausted: boolean;
  /** The lease being renewed: requests arriving meanwhile wait for it rather than each asking the store. */
  renewing?: Promise<void>;
}

/**
 * One budget per key across every instance, kept in a shared store (PostgreSQL, Redis), without a
 * store round trip per request: an instance takes a lease of `leaseSize` requests at once (one
 * atomic `consume(key, leaseSize)`) and admits requests from it in memory until it is used up or
 * the store's window ends. The store counts every leased request, so all instances together never
 * admit more than the limit per window; the price is that a lease an instance has not used up is
 * lost to the others until the window ends (at most a lease and a quarter, 0.125 % of the limit,
 * per instance).
 *
 * When the store has fewer than leaseSize requests left, the consume that finds out is told how
 * far over it went (the store's count is atomic, so each instance learns exactly its own share)
 * and keeps what was left. Once a key is exhausted, this instance refuses it until the window ends
 * without asking the store again.
 *
 * Limits under 2000 per window lease one request at a time, which is exact: every request is
 * counted in the store as it arrives (the snippet endpoints' per-address limit is such a limit).
 * Leases are renewed ahead only from 4 requests up (limits of 4000 and more).
 */
export class LeasedRateLimiter implements RateLimiter {
  private readonly leases: LRUCache<string, Lease>;
  readonly leaseSize: number;
  /** Left in the lease when the next one is requested, so that a busy key never waits for the store. */
  private readonly renewAhead: number;

  constructor(
    private readonly store: RateLimiterAbstract,
    readonly limit: number,
    options: { leaseShare?: number; maxKeys?: number } = {},
  ) {
    this.leaseSize = Math.max(1, Math.floor(limit * (options.leaseShare ?? LEASE_SHARE)));
    this.renewAhead = Math.floor(this.leaseSize / 4);
    // Forgetting a lease only forfeits its unused part (or, for an exhausted key, makes the next
    // request ask the store again): bounded, whatever the number of clients.
    this.leases = new LRUCache({ max: options.maxKeys ?? 10_000 });
  }

  hit(key: string): Promise<RateLimitDecision> {
    if (this.limit === 0) return Promise.resolve(UNLIMITED);
    const lease = this.leases.get(key);
    const now = Date.now();
    if (lease && lease.expiresAt > now) {
      if (lease.left > 0) {
        lease.left -= 1;
        if (lease.left === this.renewAhead && this.renewAhead > 0 && !lease.exhausted) {
          // A failure here reaches the request that finds the lease empty and waits for this renewal.
          this.renew(key, lease).catch(() => {});
        } else if (lease.left === 0 && !lease.exhausted && !lease.renewing) {
          // Used up, nothing pending: the next request asks the store anyway. Not keeping it keeps
          // the map to busy and refused keys (one-request leases: every client address).
          this.leases.delete(key);
        }
        return Promise.resolve({
          allowed: true,
          limit: this.limit,
          remaining: lease.left + lease.othersLeft,
          retryAfterSeconds: 0,
        });
      }
      if (lease.exhausted) return Promise.resolve(refused(this.limit, lease.expiresAt - now));
    }
    return this.renew(key, lease).then(() => this.hit(key));
  }

  /** Keys this instance holds a lease or an exhausted mark for (for tests and metrics). */
  get trackedKeys(): number {
    return this.leases.size;
  }

  private renew(key: string, current: Lease | undefined): Promise<void> {
    if (current?.renewing) return current.renewing;
    const lease: Lease = current ?? { left: 0, othersLeft: 0, expiresAt: 0, exhausted: false };
    const size = this.leaseSize;
    lease.renewing = this.store.consume(key, size).then(
      (res) => this.grant(key, lease, res, size),
      (err: unknown) => {
        lease.renewing = undefined;
        if (!(err instanceof RateLimiterRes)) throw err;
        // Over the limit with this lease: keep what was left before it (consumedPoints counts it).
        this.grant(key, lease, err, Math.max(0, Math.min(size, this.limit - (err.consumedPoints - size))));
      },
    );
    this.leases.set(key, lease);
    return lease.renewing;
  }

  private grant(key: string, lease: Lease, res: RateLimiterRes, granted: number): void {
    lease.renewing = undefined;
    const now = Date.now();
    // A lease renewed ahead adds to what is left of the current one, if the store's window is
    // still the same; what is left from a window that has ended is void.
    const sameWindow = lease.expiresAt > now && !res.isFirstInDuration;
    lease.left = (sameWindow ? lease.left : 0) + granted;
    lease.othersLeft = res.remainingPoints;
    // At least 1 ms, so that a lease taken at the very end of a window still serves its request.
    lease.expiresAt = now + Math.max(1, res.msBeforeNext);
    lease.exhausted = granted < this.leaseSize;
    this.leases.set(key, lease);
  }
}
