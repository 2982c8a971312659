import { describe, expect, it } from 'vitest';
import {
  PayPalTokens,
  TOKEN_EXPIRY_MARGIN_SECONDS,
  type IssuedToken,
  type TokenScope,
} from '../../server/src/modules/payouts/rails/paypal-tokens.js';
import { rejection } from '../support/rejection.js';

/*
 * The instance's PayPal token cache on its own clock: reused until shortly before `expires_in`
 * runs out, one token call for concurrent callers, forgotten on new credentials, on a 401 with it,
 * and after a failed token call.
 */
const scope = (over: Partial<TokenScope['credentials']> = {}, organizationId = 'org-1'): TokenScope => ({
  organizationId,
  base: 'https://api-m.sandbox.paypal.com',
  credentials: { client_id: 'client', client_secret: 'secret', environment: 'sandbox', ...over },
});

function setup() {
  let now = 1_000_000;
  const tokens = new PayPalTokens({}, () => now);
  let issued = 0;
  const issue =
    (expiresInSeconds = 32400) =>
    async (): Promise<IssuedToken> => ({ value: `token-${++issued}`, expiresInSeconds });
  return { tokens, issue, issued: () => issued, advance: (ms: number) => (now += ms) };
}

describe('PayPalTokens', () => {
  it('reuses a token until TOKEN_EXPIRY_MARGIN_SECONDS before expires_in runs out, then takes a new one', async () => {
    const t = setup();
    expect(await t.tokens.token(scope(), t.issue(3600))).toBe('token-1');
    t.advance((3600 - TOKEN_EXPIRY_MARGIN_SECONDS) * 1000 - 1);
    expect(await t.tokens.token(scope(), t.issue(3600))).toBe('token-1');
    t.advance(1);
    expect(await t.tokens.token(scope(), t.issue(3600))).toBe('token-2');
    expect(t.issued()).toBe(2);
  });

  it('a token that lives less than the margin serves only the call it was taken for', async () => {
    const t = setup();
    expect(await t.tokens.token(scope(), t.issue(TOKEN_EXPIRY_MARGIN_SECONDS))).toBe('token-1');
    expect(await t.tokens.token(scope(), t.issue(TOKEN_EXPIRY_MARGIN_SECONDS))).toBe('token-2');
  });

  it('concurrent callers wait for one token call', async () => {
    const t = setup();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const slow = async (): Promise<IssuedToken> => {
      calls++;
      await gate;
      return { value: 'shared', expiresInSeconds: 32400 };
    };
    const waiting = Promise.all(Array.from({ length: 10 }, () => t.tokens.token(scope(), slow)));
    release();
    expect(await waiting).toEqual(Array(10).fill('shared'));
    expect(calls).toBe(1);
  });

  it('one token per organization, environment and credentials: other credentials take a new one and replace it', async () => {
    const t = setup();
    expect(await t.tokens.token(scope(), t.issue())).toBe('token-1');
    expect(await t.tokens.token(scope({}, 'org-2'), t.issue())).toBe('token-2');
    expect(await t.tokens.token(scope({ environment: 'live' }), t.issue())).toBe('token-3');
    expect(await t.tokens.token(scope({ client_secret: 'rotated' }), t.issue())).toBe('token-4');
    expect(await t.tokens.token(scope({ client_secret: 'rotated' }), t.issue())).toBe('token-4');
    // The old secret's token was replaced, not kept beside the new one.
    expect(await t.tokens.token(scope(), t.issue())).toBe('token-5');
    expect(t.tokens.size).toBe(3);
  });

  it('invalidate forgets the refused token only: a newer one taken meanwhile stays', async () => {
    const t = setup();
    expect(await t.tokens.token(scope(), t.issue())).toBe('token-1');
    t.tokens.invalidate(scope(), 'token-1');
    expect(await t.tokens.token(scope(), t.issue())).toBe('token-2');
    t.tokens.invalidate(scope(), 'token-1');
    expect(await t.tokens.token(scope(), t.issue())).toBe('token-2');
  });

  it('a failed token call is not kept: the next call asks again', async () => {
    const t = setup();
    const refused = async (): Promise<IssuedToken> => {
      throw new Error('invalid_client');
    };
    expect(((await rejection(t.tokens.token(scope(), refused))) as Error).message).toBe('invalid_client');
    expect(await t.tokens.token(scope(), t.issue())).toBe('token-1');
  });
});
