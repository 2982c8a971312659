import { createHmac, randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { deliver, nowSeconds } from './helpers.js';

/**
 * Each provider's signing, exactly as the provider signs (spec/providers.md), for any body: the
 * tests replay published payloads and hostile ones through the same path a real delivery takes.
 */
export interface Signed {
  body: string;
  headers: Record<string, string>;
  send(): ReturnType<typeof deliver>;
}

const signed = (provider: string, orgId: string, body: string, headers: Record<string, string>): Signed => ({
  body,
  headers,
  send: () => deliver(provider, orgId, body, headers),
});

/** Stripe: `t=<unix>,v1=<hex>` over `${t}.${body}`, made by the stripe package's own helper. */
export function stripeSigned(orgId: string, secret: string, body: string, timestamp = nowSeconds()): Signed {
  return signed('stripe', orgId, body, {
    'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp }),
  });
}

/** Paddle Billing: `ts=<unix>;h1=<hex>`, HMAC-SHA256 of `${ts}:${body}`. */
export function paddleSigned(orgId: string, secret: string, body: string, ts = nowSeconds()): Signed {
  const h1 = createHmac('sha256', secret).update(`${ts}:${body}`).digest('hex');
  return signed('paddle', orgId, body, { 'paddle-signature': `ts=${ts};h1=${h1}` });
}

/** Lemon Squeezy: hex HMAC-SHA256 of the body in X-Signature, the event name in X-Event-Name. */
export function lemonSqueezySigned(orgId: string, secret: string, body: string, eventName: string): Signed {
  const signature = createHmac('sha256', secret).update(body).digest('hex');
  return signed('lemonsqueezy', orgId, body, { 'x-signature': signature, 'x-event-name': eventName });
}

/** Polar: Standard Webhooks keyed, as Polar's SDK does, with base64(the secret's UTF-8 bytes). */
export function polarSigned(
  orgId: string,
  secret: string,
  body: string,
  at = new Date(),
  msgId = `msg_${randomUUID()}`,
): Signed {
  const signature = new Webhook(Buffer.from(secret, 'utf8').toString('base64')).sign(msgId, at, body);
  return signed('polar', orgId, body, {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  });
}

/** Chargebee signs nothing: HTTP basic auth whose password is the stored secret. */
export function chargebeeSigned(orgId: string, password: string, body: string): Signed {
  return signed('chargebee', orgId, body, {
    authorization: `Basic ${Buffer.from(`chargebee:${password}`).toString('base64')}`,
  });
}
