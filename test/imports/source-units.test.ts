import { describe, expect, it } from 'vitest';
import { retryAfterMs } from '../../server/src/modules/imports/sources/source-http.js';
import { fromMinorUnits } from '../../server/src/modules/imports/sources/rewardful.js';

describe('reading a source', () => {
  it("waits a 429's Retry-After, as seconds or as an HTTP date (RFC 9110 §10.2.3)", () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });

  it("turns Rewardful's cents into the currency's major unit exactly, by the currency's own minor unit", () => {
    expect(fromMinorUnits(1234, 'EUR', 'amount')).toBe('12.34');
    expect(fromMinorUnits(5, 'USD', 'amount')).toBe('0.05');
    expect(fromMinorUnits(1500, 'JPY', 'amount')).toBe('1500');
    expect(fromMinorUnits(1234, 'KWD', 'amount')).toBe('1.234');
    expect(() => fromMinorUnits(12.5, 'USD', 'amount')).toThrow('amount: not a whole number of minor units');
  });
});
