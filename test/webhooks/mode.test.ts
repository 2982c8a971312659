import { describe, expect, it } from 'vitest';
import { eventFlag, landingMode, type Verification } from '../../server/src/webhooks/mode.js';
import { describePublished, published } from './published/fixtures.js';

const v = (over: Partial<Verification>): Verification => ({
  urlIsTest: false,
  verifiedByLive: false,
  verifiedByTest: false,
  flag: undefined,
  ...over,
});

describe('where a provider event lands (webhooks/mode.ts)', () => {
  it('a URL carrying the twin id: test, whatever the event says', () => {
    expect(landingMode(v({ urlIsTest: true, verifiedByTest: true, flag: 'live' }))).toBe('test');
    expect(landingMode(v({ urlIsTest: true, verifiedByTest: true }))).toBe('test');
  });

  it("the event's own test flag wins, even signed with the live secret", () => {
    expect(landingMode(v({ verifiedByLive: true, flag: 'test' }))).toBe('test');
    expect(landingMode(v({ verifiedByTest: true, flag: 'test' }))).toBe('test');
  });

  it('a live flag lands live only when the live secret vouches for it', () => {
    expect(landingMode(v({ verifiedByLive: true, flag: 'live' }))).toBe('live');
    expect(landingMode(v({ verifiedByLive: true, verifiedByTest: true, flag: 'live' }))).toBe('live');
    // Only the test secret verified it: a test secret must not be able to write live figures.
    expect(landingMode(v({ verifiedByTest: true, flag: 'live' }))).toBe('test');
  });

  it('no flag (Paddle, Polar, Chargebee): the secret that verified decides; both alike: test', () => {
    expect(landingMode(v({ verifiedByLive: true }))).toBe('live');
    expect(landingMode(v({ verifiedByTest: true }))).toBe('test');
    expect(landingMode(v({ verifiedByLive: true, verifiedByTest: true }))).toBe('test');
  });
});

const event = (payload: Record<string, unknown>) => ({ id: 'evt', type: 't', payload });

describe("the providers' flags", () => {
  it('Stripe: top-level livemode', () => {
    expect(eventFlag('stripe', event({ livemode: false }))).toBe('test');
    expect(eventFlag('stripe', event({ livemode: true }))).toBe('live');
    expect(eventFlag('stripe', event({}))).toBeUndefined();
  });

  it('Lemon Squeezy: meta.test_mode, else the object attributes test_mode', () => {
    expect(eventFlag('lemonsqueezy', event({ meta: { test_mode: true }, data: {} }))).toBe('test');
    expect(eventFlag('lemonsqueezy', event({ meta: { test_mode: false }, data: {} }))).toBe('live');
    expect(eventFlag('lemonsqueezy', event({ meta: {}, data: { attributes: { test_mode: true } } }))).toBe('test');
    expect(eventFlag('lemonsqueezy', event({ meta: {}, data: { attributes: {} } }))).toBeUndefined();
  });

  it('Paddle, Polar and Chargebee send none', () => {
    for (const provider of ['paddle', 'polar', 'chargebee'] as const)
      expect(eventFlag(provider, event({ livemode: false, meta: { test_mode: true } }))).toBeUndefined();
  });
});

describePublished("the flags where the providers' published events carry them", () => {
  it('Stripe event envelope: livemode false (a test-mode example)', () => {
    expect(eventFlag('stripe', event(published('stripe', 'event.json')))).toBe('test');
  });

  it('Lemon Squeezy objects: attributes.test_mode false (live examples)', () => {
    for (const file of ['order.json', 'subscription-invoice.json', 'subscription.json']) {
      // The docs publish the object; a webhook wraps it as { meta, data } (SOURCES.txt, "lemonsqueezy envelope").
      const data = published('lemonsqueezy', file);
      expect(eventFlag('lemonsqueezy', event({ meta: { event_name: 'order_created' }, data })), file).toBe('live');
    }
  });
});
