import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { clientAddressKey, type RateLimiter } from '../../server/src/http/rate-limit.js';
import { LEASE_SHARE, LeasedRateLimiter, memoryRateLimiter } from '../../server/src/http/rate-limit-flexible.js';

// rate-limiter-flexible's memory store reads Date.now() and expires keys with setTimeout: both faked.
beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(new Date('2026-12-10T12:00:00.000Z'));
});
afterEach(() => vi.useRealTimers());

const hits = (limiter: RateLimiter, key: string, n: number) =>
  Promise.all(Array.from({ length: n }, () => limiter.hit(key)));

describe('memoryRateLimiter (rate-limiter-flexible, per instance)', () => {
  it('allows `limit` requests per window, counting down RateLimit-Remaining, then refuses with the wait', async () => {
    const limiter = memoryRateLimiter({ limit: 5, windowSeconds: 60 });
    const decisions = [];
    for (let i = 0; i < 5; i++) {
      decisions.push(await limiter.hit('a'));
      vi.advanceTimersByTime(1_000);
    }
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true]);
    expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);
    // The window started with the first request, 5 s ago: it ends in 55 s.
    expect(await limiter.hit('a')).toEqual({ allowed: false, limit: 5, remaining: 0, retryAfterSeconds: 55 });
  });

  it('Retry-After is honest: a second early is refused, at Retry-After the request goes through', async () => {
    const limiter = memoryRateLimiter({ limit: 3, windowSeconds: 60 });
    await hits(limiter, 'k', 3);
    vi.advanceTimersByTime(12_345);
    const refused = await limiter.hit('k');
    expect(refused.allowed).toBe(false);
    vi.advanceTimersByTime(refused.retryAfterSeconds * 1000 - 1_000);
    expect((await limiter.hit('k')).allowed).toBe(false);
    vi.advanceTimersByTime(1_000);
    expect((await limiter.hit('k')).allowed).toBe(true);
  });

  it('keys are independent; limit 0 disables limiting', async () => {
    const limiter = memoryRateLimiter({ limit: 2, windowSeconds: 60 });
    expect((await hits(limiter, 'a', 3)).map((d) => d.allowed)).toEqual([true, true, false]);
    expect((await hits(limiter, 'b', 2)).map((d) => d.allowed)).toEqual([true, true]);
    const off = memoryRateLimiter({ limit: 0, windowSeconds: 60 });
    expect((await hits(off, 'a', 1000)).every((d) => d.allowed)).toBe(true);
  });

  it('rejects nonsensical options', () => {
    expect(() => memoryRateLimiter({ limit: 1, windowSeconds: 0 })).toThrow();
    expect(() => memoryRateLimiter({ limit: -1, windowSeconds: 60 })).toThrow();
    expect(() => memoryRateLimiter({ limit: 1.5, windowSeconds: 60 })).toThrow();
  });
});

/**
 * A shared store stands in for PostgreSQL or Redis: one RateLimiterMemory that two
 * LeasedRateLimiters (two instances) consume from, counting the store operations.
 */
function sharedStore(limit: number, windowSeconds = 60) {
  const store = new RateLimiterMemory({ points: limit, duration: windowSeconds });
  const consume = vi.spyOn(store, 'consume');
  return { store, consume };
}

describe('LeasedRateLimiter (one budget across instances, few store operations)', () => {
  it('takes the budget from the store in leases of 0.1 % of the limit, not one request at a time', async () => {
    const { store, consume } = sharedStore(100_000);
    const limiter = new LeasedRateLimiter(store, 100_000);
    expect(limiter.leaseSize).toBe(100_000 * LEASE_SHARE);
    for (let i = 0; i < 250; i++) expect((await limiter.hit('key')).allowed).toBe(true);
    expect(consume).toHaveBeenCalledTimes(3);
    expect(consume).toHaveBeenCalledWith('key', 100);
  });

  it('concurrent requests wait for one lease instead of each asking the store', async () => {
    const { store, consume } = sharedStore(10_000);
    const limiter = new LeasedRateLimiter(store, 10_000);
    const decisions = await hits(limiter, 'key', 35);
    expect(decisions.every((d) => d.allowed)).toBe(true);
    expect(consume).toHaveBeenCalledTimes(4);
  });

  it('two instances together admit exactly the limit, however their requests interleave', async () => {
    const { store } = sharedStore(100);
    const [a, b] = [
      new LeasedRateLimiter(store, 100, { leaseShare: 0.07 }),
      new LeasedRateLimiter(store, 100, { leaseShare: 0.07 }),
    ];
    expect(a.leaseSize).toBe(7);
    const decisions = [];
    // Both keep asking: the last leases are partial (each instance keeps exactly what was left
    // before its own consume), then there is nothing left for anyone.
    for (let i = 0; i < 150; i++) decisions.push(await (i % 3 === 0 ? a : b).hit('key'));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
    expect(decisions.slice(-30).every((d) => !d.allowed)).toBe(true);
    const refused = decisions[149];
    expect(refused).toEqual({ allowed: false, limit: 100, remaining: 0, retryAfterSeconds: 60 });
  });

  it('a lease one instance has not used is lost to the others until the window ends (at most one lease each)', async () => {
    const { store } = sharedStore(100);
    const [a, b] = [
      new LeasedRateLimiter(store, 100, { leaseShare: 0.1 }),
      new LeasedRateLimiter(store, 100, { leaseShare: 0.1 }),
    ];
    expect((await a.hit('key')).allowed).toBe(true); // a leases 10, uses 1
    const fromB = await hits(b, 'key', 100);
    expect(fromB.filter((d) => d.allowed)).toHaveLength(90);
    // a still admits its own 9.
    expect((await hits(a, 'key', 10)).filter((d) => d.allowed)).toHaveLength(9);
  });

  it('an exhausted key is refused locally until its window ends, then admitted again', async () => {
    const { store, consume } = sharedStore(10, 30);
    const limiter = new LeasedRateLimiter(store, 10);
    await hits(limiter, 'key', 10);
    const calls = consume.mock.calls.length;
    vi.advanceTimersByTime(10_000);
    const refused = await hits(limiter, 'key', 20);
    expect(refused.every((d) => !d.allowed)).toBe(true);
    expect(refused[0].retryAfterSeconds).toBe(20);
    // One operation found the key exhausted; the rest were refused without asking the store.
    expect(consume.mock.calls.length).toBe(calls + 1);
    vi.advanceTimersByTime(20_000);
    expect((await limiter.hit('key')).allowed).toBe(true);
  });

  it('advertises what is left of the shared budget', async () => {
    const { store } = sharedStore(5);
    const [a, b] = [new LeasedRateLimiter(store, 5), new LeasedRateLimiter(store, 5)];
    const remaining = [];
    for (let i = 0; i < 5; i++) remaining.push((await (i % 2 ? a : b).hit('key')).remaining);
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
  });

  it('passes a store failure on (countRequest then lets the request through)', async () => {
    const { store, consume } = sharedStore(10);
    consume.mockRejectedValueOnce(new Error('connection refused'));
    const limiter = new LeasedRateLimiter(store, 10);
    await expect(limiter.hit('key')).rejects.toThrow('connection refused');
    expect((await limiter.hit('key')).allowed).toBe(true);
  });

  it('keeps only busy and refused keys in memory, and at most maxKeys of them', async () => {
    const { store } = sharedStore(2);
    const limiter = new LeasedRateLimiter(store, 2, { maxKeys: 50 });
    for (let i = 0; i < 1000; i++) await limiter.hit(`address-${i}`);
    // One-request leases, used up: nothing to remember (the store counts them).
    expect(limiter.trackedKeys).toBe(0);
    for (let i = 0; i < 1000; i++) await hits(limiter, `address-${i}`, 2);
    // Now every key is exhausted: the most recent 50 are refused without asking the store.
    expect(limiter.trackedKeys).toBe(50);
    expect((await limiter.hit('address-999')).allowed).toBe(false);
    expect((await limiter.hit('address-0')).allowed).toBe(false);
  });

  it('limit 0 disables limiting without touching the store', async () => {
    const { store, consume } = sharedStore(1);
    const limiter = new LeasedRateLimiter(store, 0);
    expect((await hits(limiter, 'key', 50)).every((d) => d.allowed)).toBe(true);
    expect(consume).not.toHaveBeenCalled();
  });
});

describe('clientAddressKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff:0:0:9', '2001:db8:1:2::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    [undefined, 'unknown'],
  ])('%s -> %s', (address, key) => {
    expect(clientAddressKey(address)).toBe(key);
  });

  it('bounds what is not an address (a trusted proxy relaying a client-written X-Forwarded-For) to 100 characters', () => {
    expect(clientAddressKey('x'.repeat(5_000))).toBe('x'.repeat(100));
  });
});
