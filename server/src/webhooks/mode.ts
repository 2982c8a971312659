import type { WebhookProvider } from '@affiliate-attribution/contract';
import { obj } from './types.js';
import type { VerifiedEvent } from './types.js';

/**
 * Where a provider event lands: the live organization or its test twin (spec/test-mode.md,
 * "Payment providers"). Pure: the dispatcher looks up the two organizations and their secrets,
 * verifies, and asks here.
 *
 * - The URL names the twin itself: everything is test (a merchant may paste either id).
 * - The event's own flag wins where the provider sends one (Stripe `livemode`, Lemon Squeezy
 *   `meta.test_mode`): a test event never creates live data, even when it was signed with the live
 *   secret (a merchant who pasted the live secret into the test webhook, or one secret for both).
 * - A live-flagged event that only the TEST secret verifies lands in test data: the live secret
 *   did not vouch for it, and a test integration must not be able to write live figures (whoever
 *   holds a test secret, a developer's laptop, a CI log, could otherwise forge live sales).
 * - Providers that send no flag (Paddle and Polar sandboxes, Chargebee test sites) are told apart
 *   by their secrets, which the sandbox or test site issues apart from production: verified by the
 *   test integration's secret is test. Verified by both (the same secret stored in both modes),
 *   the event cannot be told apart and lands in test data, by the same rule: never live by doubt.
 */
export type Mode = 'live' | 'test';

export interface Verification {
  /** The URL carried the twin's id: there is no live side to land in. */
  urlIsTest: boolean;
  verifiedByLive: boolean;
  verifiedByTest: boolean;
  /** What the event says of itself: 'test', 'live', or undefined when the provider sends no flag. */
  flag: Mode | undefined;
}

export function landingMode(v: Verification): Mode {
  if (v.urlIsTest) return 'test';
  if (v.flag === 'test') return 'test';
  if (!v.verifiedByLive) return 'test';
  if (v.flag === 'live') return 'live';
  return v.verifiedByTest ? 'test' : 'live';
}

/**
 * The event's own flag, per provider, read from the published payloads (fixtures/providers):
 * Stripe events carry `livemode` at the top level; Lemon Squeezy webhooks carry `meta.test_mode`
 * (and the object's `data.attributes.test_mode`, read when meta says nothing). Paddle, Polar and
 * Chargebee events carry none: their sandboxes and test sites are separate accounts with their own
 * webhook secrets (Chargebee: its own basic-auth credentials), so the secret tells.
 */
export function eventFlag(provider: WebhookProvider, event: VerifiedEvent): Mode | undefined {
  const payload = event.payload;
  switch (provider) {
    case 'stripe':
      return payload.livemode === false ? 'test' : payload.livemode === true ? 'live' : undefined;
    case 'lemonsqueezy': {
      const flag = obj(payload.meta)?.test_mode ?? obj(obj(payload.data)?.attributes)?.test_mode;
      return flag === true ? 'test' : flag === false ? 'live' : undefined;
    }
    default:
      return undefined;
  }
}
