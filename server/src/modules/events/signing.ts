import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks' form). */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `msg_` + the outbox event's id without dashes: the `webhook-id` of every attempt of the event. */
export const webhookIdOf = (eventId: string): string => `msg_${eventId.replace(/-/g, '')}`;

/**
 * The Standard Webhooks headers of one attempt. Several secrets (a rotation's new and previous
 * one) give several space-separated signatures, and a receiver accepts the message when any one
 * verifies with its secret, which is how the scheme lets a secret be rotated without downtime.
 */
export function signedHeaders(secrets: readonly string[], webhookId: string, at: Date, body: string): Record<string, string> {
  const signature = secrets.map((secret) => new Webhook(secret).sign(webhookId, at, body)).join(' ');
  return { 'webhook-id': webhookId, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}
