import { afterEach, describe, expect, it, vi } from 'vitest';
import { LruCache } from '../../server/src/lru-cache.js';

describe('LruCache', () => {
  afterEach(() => vi.useRealTimers());

  it('drops the least recently used entry when full', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now more recent than b
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
  });

  it('forgets entries older than the TTL, and on delete', () => {
    vi.useFakeTimers();
    const cache = new LruCache<string, number>(10, 1_000);
    cache.set('k', 1);
    vi.advanceTimersByTime(999);
    expect(cache.get('k')).toBe(1);
    vi.advanceTimersByTime(2);
    expect(cache.get('k')).toBeUndefined();
    cache.set('k', 2);
    cache.delete('k');
    expect(cache.get('k')).toBeUndefined();
  });
});
