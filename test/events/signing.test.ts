import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { Signer, newEndpointSecret, signedHeaders } from '../../server/src/modules/events/signing.js';

/** Our signer (node:crypto) against the `standardwebhooks` package: the same signature, and it verifies. */
describe('Standard Webhooks signing', () => {
  it('signs exactly as standardwebhooks does, and its verify accepts every delivery', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 2000 }),
        fc.stringMatching(/^msg_[0-9a-f]{32}$/),
        (text, webhookId) => {
          const secret = newEndpointSecret();
          const body = JSON.stringify({ type: 'conversion.created', data: { text } });
          const headers = signedHeaders([new Signer(secret)], webhookId, new Date(), body);
          const reference = new Webhook(secret);
          expect(headers['webhook-signature']).toBe(
            reference.sign(webhookId, new Date(Number(headers['webhook-timestamp']) * 1000), body),
          );
          expect(reference.verify(body, headers)).toEqual(JSON.parse(body));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('two secrets (a rotation): two signatures, each secret verifies alone; another secret does not', () => {
    const [current, previous] = [newEndpointSecret(), newEndpointSecret()];
    const body = '{"type":"payout.paid"}';
    const headers = signedHeaders([new Signer(current), new Signer(previous)], 'msg_1', new Date(), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(current).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(newEndpointSecret()).verify(body, headers)).toThrow();
  });
});
