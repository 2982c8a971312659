import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks' form). */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `msg_` + the outbox event's id without dashes: the `webhook-id` of every attempt of the event. */
export const webhookIdOf = (eventId: string): string => `msg_${eventId.replace(/-/g, '')}`;

/**
 * The Standard Webhooks headers of one attempt, signed by each signer (`new Webhook(secret)` of
 * the `standardwebhooks` package). Several secrets (a rotation's new and previous one) give
 * several space-separated signatures, and a receiver accepts the message when any one verifies
 * with its secret, which is how the scheme lets a secret be rotated without downtime.
 */
export function signedHeaders(signers: readonly Webhook[], webhookId: string, at: Date, body: string): Record<string, string> {
  const signature = signers.map((signer) => signer.sign(webhookId, at, body)).join(' ');
  return { 'webhook-id': webhookId, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}

/**
 * Signers by the secret's stored (encrypted) form: decrypting and decoding a secret once per
 * endpoint and rotation, not once per delivery. A rotation stores a new value, hence a new entry.
 */
export class Signers {
  private readonly byStored = new Map<string, Webhook>();

  constructor(private readonly open: (stored: string) => string) {}

  get(stored: string): Webhook {
    let signer = this.byStored.get(stored);
    if (!signer) {
      if (this.byStored.size >= 10_000) this.byStored.clear();
      signer = new Webhook(this.open(stored));
      this.byStored.set(stored, signer);
    }
    return signer;
  }
}
