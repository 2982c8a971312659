import { createHmac, randomBytes } from 'node:crypto';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks' form). */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `msg_` + the outbox event's id without dashes: the `webhook-id` of every attempt of the event. */
export const webhookIdOf = (eventId: string): string => `msg_${eventId.replace(/-/g, '')}`;

/**
 * Signs with one endpoint secret as the Standard Webhooks scheme says (and the `standardwebhooks`
 * package does, which verifies every delivery in the tests): `v1,` + base64 of HMAC-SHA256, keyed
 * with the secret's base64-decoded bytes, over `<webhook-id>.<unix seconds>.<body>`. Node's own
 * HMAC rather than the package's `sign`, whose pure-JavaScript SHA-256 cost a few per cent of the
 * service's CPU under load (the bench:events profile).
 */
export class Signer {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
    if (this.key.length === 0) throw new Error("Secret can't be empty.");
  }

  sign(webhookId: string, unixSeconds: number, body: string): string {
    return `v1,${createHmac('sha256', this.key).update(`${webhookId}.${unixSeconds}.`).update(body).digest('base64')}`;
  }
}

/**
 * The Standard Webhooks headers of one attempt, signed by each signer. Several secrets (a
 * rotation's new and previous one) give several space-separated signatures, and a receiver
 * accepts the message when any one verifies with its secret, which is how the scheme lets a
 * secret be rotated without downtime.
 */
export function signedHeaders(
  signers: readonly Signer[],
  webhookId: string,
  at: Date,
  body: string,
): Record<string, string> {
  const unixSeconds = Math.floor(at.getTime() / 1000);
  const signature = signers.map((signer) => signer.sign(webhookId, unixSeconds, body)).join(' ');
  return { 'webhook-id': webhookId, 'webhook-timestamp': String(unixSeconds), 'webhook-signature': signature };
}

/**
 * Signers by the secret's stored (encrypted) form: decrypting and decoding a secret once per
 * endpoint and rotation, not once per delivery. A rotation stores a new value, hence a new entry.
 */
export class Signers {
  private readonly byStored = new Map<string, Signer>();

  constructor(private readonly open: (stored: string) => string) {}

  get(stored: string): Signer {
    let signer = this.byStored.get(stored);
    if (!signer) {
      if (this.byStored.size >= 10_000) this.byStored.clear();
      signer = new Signer(this.open(stored));
      this.byStored.set(stored, signer);
    }
    return signer;
  }
}
