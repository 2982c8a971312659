import { createHash } from 'node:crypto';
import type { PayoutMethod } from '@affiliate-attribution/contract';

/** A rail that moves money (every method but `manual`). */
export type RailMethod = Exclude<PayoutMethod, 'manual'>;

/** The integration each rail is sent with. */
export const RAIL_INTEGRATION = {
  paypal: 'paypal_payouts',
  stripe: 'stripe_connect',
  wise: 'wise',
} as const satisfies Record<RailMethod, string>;

/** One payout as a rail sends it. */
export interface RailItem {
  payout_id: string;
  /** Major units, exact, with the currency's own number of decimals ("12.50", "1200" for JPY). */
  amount: string;
  currency: string;
  /** The payout's idempotency key with this provider (payouts.send_key). */
  key: string;
  /** The provider's ids already known (payouts.provider_reference), or null. */
  reference: string | null;
  email: string;
  name: string | null;
  stripe_account_id: string | null;
  /** The payout's program, as the partner knows it (PayPal's note and e-mail subject name it). */
  program_name: string;
}

/** One provider batch: one rail and one currency. */
export interface RailBatch {
  currency: string;
  items: RailItem[];
}

/** What a provider says of one payout. `processing`: not decided yet (PayPal UNCLAIMED included). */
export interface RailState {
  payout_id: string;
  reference: string | null;
  outcome: 'processing' | 'paid' | 'failed';
  reason?: string;
}

/**
 * The provider answered and took nothing (a 4xx other than a duplicate): nothing was sent, so the
 * payouts may fail at once with this reason.
 */
export class RailRefused extends Error {}

/**
 * The outcome of a call is unknown (a timeout, a dropped connection, a 5xx): the payouts stay
 * `processing` and the reconciliation asks the provider by their keys.
 */
export class RailUnreachable extends Error {}

export interface RailClient {
  /** Sends a batch whose keys are already stored (payout-sender.ts). */
  send(batch: RailBatch): Promise<RailState[]>;
  /** Asks the provider what became of payouts in flight: by their reference, else by their idempotency key. */
  lookup(batch: RailBatch): Promise<RailState[]>;
}

/**
 * For rails without batches (Stripe, Wise): one payout at a time, in the batch's order, each under
 * its own key. A step answering null leaves that payout out (nothing learnt: it stays as it is); a
 * step that throws stops the rest.
 */
export async function oneByOne(
  batch: RailBatch,
  step: (item: RailItem) => Promise<RailState | null>,
): Promise<RailState[]> {
  const states: RailState[] = [];
  for (const item of batch.items) {
    const state = await step(item);
    if (state) states.push(state);
  }
  return states;
}

/**
 * RailClient.lookup for rails without batches: a payout whose provider reference is known is asked
 * for by it (null: no answer, it stays in flight); one whose answer was lost is recovered by its key.
 */
export function lookupOneByOne(
  batch: RailBatch,
  byReference: (item: RailItem, reference: string) => Promise<RailState | null>,
  byKey: (item: RailItem) => Promise<RailState>,
): Promise<RailState[]> {
  return oneByOne(batch, (item) => (item.reference ? byReference(item, item.reference) : byKey(item)));
}

/** A deterministic UUID (version 5 layout) from a name: Wise's customerTransactionId must be a UUID. */
export function uuidFrom(name: string): string {
  const h = createHash('sha256').update(name).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/**
 * The idempotency key each payout carries to its provider, derived from the payout alone (so the
 * same payout always carries the same key, whoever sends it):
 * - PayPal: the batch's `sender_batch_id` (shared by the batch's payouts; each item's
 *   `sender_item_id` is the payout id), from the payouts it carries;
 * - Stripe: the `Idempotency-Key` (and the transfer's `transfer_group`, by which it is looked up);
 * - Wise: `customerTransactionId`, a UUID.
 */
export function sendKeys(method: RailMethod, payoutIds: readonly string[]): Map<string, string> {
  const keys = new Map<string, string>();
  if (method === 'paypal') {
    const batch = `svc-${createHash('sha256')
      .update([...payoutIds].sort().join(','))
      .digest('hex')
      .slice(0, 32)}`;
    for (const id of payoutIds) keys.set(id, batch);
  } else {
    for (const id of payoutIds) keys.set(id, method === 'stripe' ? `svc-payout-${id}` : uuidFrom(`svc-payout:${id}`));
  }
  return keys;
}

/** A JSON HTTP call bounded in time; a timeout or a dropped connection is RailUnreachable (the outcome is unknown). */
export async function call(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
  timeoutMs = 15_000,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the provider's JSON answer, checked field by field by each rail
): Promise<{ status: number; body: any }> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new RailUnreachable(`${init.method} ${new URL(url).pathname}: ${(err as Error).message}`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (err) {
    throw new RailUnreachable(`${init.method} ${new URL(url).pathname}: answer lost (${(err as Error).message})`);
  }
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = { raw: text.slice(0, 500) };
  }
  if (response.status >= 500) throw new RailUnreachable(`${init.method} ${new URL(url).pathname}: ${response.status}`);
  return { status: response.status, body };
}

export const joinUrl = (base: string, path: string) => `${base.replace(/\/+$/, '')}${path}`;
