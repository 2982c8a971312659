import { describe, expect, it } from 'vitest';
import { clientAddressKey, InMemorySlidingWindowRateLimiter } from '../../server/src/http/rate-limit.js';

function limiter(limit: number, windowMs = 60_000, start = 1_000_000 * 60_000) {
  let now = start;
  const l = new InMemorySlidingWindowRateLimiter({ limit, windowMs, now: () => now });
  return {
    l,
    advance(ms: number) {
      now += ms;
    },
    hits(key: string, n: number) {
      return Array.from({ length: n }, () => l.hitSync(key));
    },
  };
}

describe('InMemorySlidingWindowRateLimiter', () => {
  it('allows `limit` requests per window, then refuses with the time to wait', async () => {
    const { l, hits } = limiter(5);
    const decisions = hits('a', 5);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true]);
    expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);
    const refused = await l.hit('a');
    expect(refused).toEqual({ allowed: false, limit: 5, remaining: 0, retryAfterSeconds: expect.any(Number) });
    // All 5 at the very start of a window: the next fits once, in the next window, they weigh
    // at most 4, i.e. 60 s + 20 % of 60 s.
    expect(refused.retryAfterSeconds).toBe(72);
  });

  it('keys are independent', () => {
    const { hits } = limiter(2);
    expect(hits('a', 3).map((d) => d.allowed)).toEqual([true, true, false]);
    expect(hits('b', 2).map((d) => d.allowed)).toEqual([true, true]);
  });

  it('slides: the previous window counts in proportion to its overlap', () => {
    const { hits, advance } = limiter(10);
    hits('a', 10);
    advance(60_000); // start of the next window: the previous 10 still weigh 100 %
    expect(hits('a', 1)[0].allowed).toBe(false);
    advance(30_000); // half way: they weigh 5
    expect(hits('a', 6).map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    advance(60_000); // two windows on: the first 10 no longer count, the 5 weigh 50 % -> 2.5
    expect(hits('a', 8).filter((d) => d.allowed)).toHaveLength(7);
  });

  it('Retry-After is honest: waiting that long gets the next request through', () => {
    for (const [limit, spacing] of [
      [3, 0],
      [10, 4_000],
      [7, 7_000],
      [1, 0],
    ] as const) {
      const { l, advance } = limiter(limit);
      let refused;
      for (let i = 0; i < 100 && !refused; i++) {
        const d = l.hitSync('k');
        if (!d.allowed) refused = d;
        else advance(spacing);
      }
      expect(refused).toBeDefined();
      // A second short of Retry-After is still too early (it is rounded up, never down) ...
      advance(refused!.retryAfterSeconds * 1000 - 1_000);
      expect(l.hitSync('k').allowed, `early: limit ${limit}, spacing ${spacing}`).toBe(false);
      // ... and at Retry-After the request goes through.
      advance(1_000);
      expect(l.hitSync('k').allowed, `limit ${limit}, spacing ${spacing}`).toBe(true);
    }
  });

  it('a refused request does not count: a client that backs off is not punished', () => {
    const { l, hits, advance } = limiter(2, 1_000);
    hits('a', 2);
    hits('a', 50); // all refused
    advance(2_000);
    expect(l.hitSync('a').allowed).toBe(true);
  });

  it('limit 0 disables limiting', () => {
    const { hits } = limiter(0);
    expect(hits('a', 1000).every((d) => d.allowed)).toBe(true);
  });

  it('forgets keys that can no longer count, and caps the keys it tracks', () => {
    const { l, hits, advance } = limiter(5, 1_000);
    for (let i = 0; i < 50; i++) hits(`k${i}`, 1);
    expect(l.size).toBe(50);
    advance(2_500);
    hits('fresh', 1);
    expect(l.size).toBe(1);

    const capped = new InMemorySlidingWindowRateLimiter({ limit: 5, windowMs: 60_000, maxKeys: 100 });
    for (let i = 0; i < 1000; i++) capped.hitSync(`k${i}`);
    expect(capped.size).toBeLessThanOrEqual(100);
    expect(capped.hitSync('k999').remaining).toBe(3); // the newest keys are kept
  });

  it('rejects nonsensical options', () => {
    expect(() => new InMemorySlidingWindowRateLimiter({ limit: 1, windowMs: 0 })).toThrow();
    expect(() => new InMemorySlidingWindowRateLimiter({ limit: -1, windowMs: 1000 })).toThrow();
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
});
