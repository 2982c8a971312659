import type { IncomingHttpHeaders } from 'node:http';
import { BadRequestError } from '../http/errors.js';
import type { PayPalTransmission } from '../modules/payouts/rails/paypal.js';
import { TIMESTAMP_TOLERANCE_SECONDS, type Json } from './types.js';

/*
 * What a PayPal webhook must look like before PayPal is asked to verify it. Verification costs the
 * merchant two PayPal calls with their credentials (a token, unless one is cached, and
 * verify-webhook-signature), and the webhook URL is public: a request that cannot be PayPal's is
 * refused here, with no outbound call. Each refusal says what was wrong and never repeats what the
 * request sent (the reasons are counted in the organization's webhook log, one row per reason).
 *
 * The shapes are PayPal's own, from the verify-webhook-signature request it documents
 * (https://developer.paypal.com/api/webhooks/v1/definitions/verify_webhook_signature):
 * auth_algo ^[a-zA-Z0-9]+$ (<= 100), cert_url a URI (<= 500), transmission_id ^(?!\d+$)\w+\S+
 * (<= 50), transmission_sig (<= 500; an RSA signature in base64), transmission_time an Internet
 * date-time (<= 100), each taken from the PAYPAL-* header of the same name.
 */

export const PAYPAL_HEADERS = [
  'paypal-transmission-id',
  'paypal-transmission-time',
  'paypal-transmission-sig',
  'paypal-cert-url',
  'paypal-auth-algo',
] as const;

/**
 * Where PayPal serves the certificates its webhooks are signed with, per environment: the API hosts
 * (api.paypal.com and api.sandbox.paypal.com, as PayPal's webhook samples show, e.g.
 * https://api.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77 in
 * verify-webhook-signature's examples, and their api-m names, which PayPal's API reference uses for
 * the same API: https://developer.paypal.com/api/rest/). A certificate of the other environment
 * cannot verify this integration's webhooks, so it is refused as well.
 */
export const PAYPAL_CERT_HOSTS = {
  live: ['api.paypal.com', 'api-m.paypal.com'],
  sandbox: ['api.sandbox.paypal.com', 'api-m.sandbox.paypal.com'],
} as const;
export const PAYPAL_CERT_PATH = '/v1/notifications/certs/';

/**
 * How far PAYPAL-TRANSMISSION-TIME may be from this instance's clock: 5 minutes either way, the
 * tolerance the payment providers' signed timestamps get here (Stripe, Paddle, Standard Webhooks).
 * PayPal defines it as the time of the HTTP transmission, so each delivery attempt (PayPal retries
 * up to 25 times over 3 days) carries its own; a captured request replayed later is refused
 * without PayPal being asked.
 */
export const TRANSMISSION_WINDOW_SECONDS = TIMESTAMP_TOLERANCE_SECONDS;

/** A PayPal webhook that passed every check that needs no call to PayPal. */
export interface PayPalWebhookCandidate {
  transmission: PayPalTransmission;
  event: Json;
  eventId: string;
  eventType: string;
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const EVENT_ID = /^[A-Za-z0-9_-]{1,100}$/;
const EVENT_TYPE = /^[A-Za-z0-9._-]{1,100}$/;

export function checkPayPalWebhook(input: {
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  environment: 'sandbox' | 'live';
  now: number;
}): PayPalWebhookCandidate {
  const missing = PAYPAL_HEADERS.filter((name) => !header(input.headers, name));
  if (missing.length > 0)
    throw new BadRequestError(`Missing PayPal webhook header(s): ${missing.map((n) => n.toUpperCase()).join(', ')}`);
  const transmission: PayPalTransmission = {
    auth_algo: header(input.headers, 'paypal-auth-algo')!,
    cert_url: header(input.headers, 'paypal-cert-url')!,
    transmission_id: header(input.headers, 'paypal-transmission-id')!,
    transmission_sig: header(input.headers, 'paypal-transmission-sig')!,
    transmission_time: header(input.headers, 'paypal-transmission-time')!,
  };

  if (!/^[A-Za-z0-9]{1,100}$/.test(transmission.auth_algo)) {
    throw new BadRequestError(
      'Malformed PAYPAL-AUTH-ALGO: expected letters and digits, up to 100 (PayPal sends SHA256withRSA)',
    );
  }
  if (transmission.transmission_id.length > 50 || !/^(?!\d+$)\w+\S+$/.test(transmission.transmission_id)) {
    throw new BadRequestError(
      "Malformed PAYPAL-TRANSMISSION-ID: expected PayPal's transmission id (up to 50 characters, no spaces)",
    );
  }
  // PayPal's signature is an RSA signature in padded base64.
  const sig = transmission.transmission_sig;
  if (sig.length > 500 || sig.length % 4 !== 0 || !BASE64.test(sig)) {
    throw new BadRequestError('Malformed PAYPAL-TRANSMISSION-SIG: expected a base64 signature of up to 500 characters');
  }
  const sentAt = RFC3339.test(transmission.transmission_time) ? Date.parse(transmission.transmission_time) : Number.NaN;
  if (!Number.isFinite(sentAt)) {
    throw new BadRequestError(
      'Malformed PAYPAL-TRANSMISSION-TIME: expected an Internet date-time (RFC 3339, e.g. 2026-01-31T12:00:00Z)',
    );
  }
  if (!isPayPalCertUrl(transmission.cert_url, input.environment)) {
    const where = PAYPAL_CERT_HOSTS[input.environment].map((host) => `https://${host}${PAYPAL_CERT_PATH}`).join(' or ');
    throw new BadRequestError(
      `Invalid PAYPAL-CERT-URL: not a certificate of PayPal's ${input.environment} environment (${where}…)`,
    );
  }
  if (Math.abs(input.now - sentAt) > TRANSMISSION_WINDOW_SECONDS * 1000) {
    throw new BadRequestError(
      `PAYPAL-TRANSMISSION-TIME is more than ${TRANSMISSION_WINDOW_SECONDS} s away from now: not a current PayPal transmission`,
    );
  }

  const event = parseJsonObject(input.rawBody);
  // Every PayPal event has both (https://developer.paypal.com/api/rest/webhooks/event-names/); they are also what remembers it.
  if (
    typeof event.id !== 'string' ||
    !EVENT_ID.test(event.id) ||
    typeof event.event_type !== 'string' ||
    !EVENT_TYPE.test(event.event_type)
  ) {
    throw new BadRequestError(
      'Malformed PayPal event: expected its id and event_type (strings of letters, digits, ".", "_" or "-", up to 100)',
    );
  }
  return { transmission, event, eventId: event.id, eventType: event.event_type };
}

/** https, PayPal's certificate hosts of the environment, the certs path, nothing else (no credentials, port, query or fragment). */
export function isPayPalCertUrl(value: string, environment: 'sandbox' | 'live'): boolean {
  if (value.length > 500) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' || url.username || url.password || url.port || url.search || url.hash) return false;
  if (!(PAYPAL_CERT_HOSTS[environment] as readonly string[]).includes(url.hostname)) return false;
  if (!url.pathname.startsWith(PAYPAL_CERT_PATH)) return false;
  return /^[A-Za-z0-9_-]{1,200}$/.test(url.pathname.slice(PAYPAL_CERT_PATH.length));
}

export function parseJsonObject(raw: Buffer): Json {
  try {
    const value: unknown = JSON.parse(raw.toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Json;
  } catch {
    // refused below
  }
  throw new BadRequestError('Malformed webhook body: expected a JSON object');
}
