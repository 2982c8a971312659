import { describe, expect, it } from 'vitest';
import { MAX_FUTURE_SKEW_MS, resolveOccurredAt } from '../../server/src/attribution/occurred-at.js';
import { isClickWindowExpired } from '../../server/src/attribution/windows.js';

const DAY = 86_400_000;

describe('click window', () => {
  const click = new Date('2026-01-01T00:00:00Z');
  it('attributes up to and including the last instant of the window', () => {
    expect(isClickWindowExpired(click, 30, new Date(click.getTime() + 30 * DAY))).toBe(false);
    expect(isClickWindowExpired(click, 30, new Date(click.getTime() + 30 * DAY + 1))).toBe(true);
  });
  it('a window of 0 days only attributes at the click instant', () => {
    expect(isClickWindowExpired(click, 0, click)).toBe(false);
    expect(isClickWindowExpired(click, 0, new Date(click.getTime() + 1000))).toBe(true);
  });
});

describe('occurred_at', () => {
  const now = new Date('2026-06-01T12:00:00Z');
  it('defaults to now and accepts the past and up to 5 minutes ahead', () => {
    expect(resolveOccurredAt(undefined, now)).toBe(now);
    expect(resolveOccurredAt('2020-01-01T00:00:00+02:00', now).toISOString()).toBe('2019-12-31T22:00:00.000Z');
    expect(resolveOccurredAt(new Date(now.getTime() + MAX_FUTURE_SKEW_MS).toISOString(), now)).toBeInstanceOf(Date);
  });
  it('refuses more than 5 minutes in the future', () => {
    expect(() => resolveOccurredAt(new Date(now.getTime() + MAX_FUTURE_SKEW_MS + 1000).toISOString(), now)).toThrow(
      'occurred_at: must not be more than 5 minutes in the future',
    );
  });
});
