import { createVerify } from 'node:crypto';
import express, { Router } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import { payoutRailSettings } from '../config.js';
import type { Logger } from 'pino';
import { asyncHandler } from '../http/error-handler.js';
import { BadRequestError, HttpError } from '../http/errors.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { isUuid } from '../http/serialize.js';
import type { PayoutSender } from '../modules/payouts/payout-sender.js';
import { paypalItemState } from '../modules/payouts/rails/paypal.js';
import { stripeTransferState } from '../modules/payouts/rails/stripe.js';
import { wiseTransferState } from '../modules/payouts/rails/wise.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { checkEvent } from './input-rules.js';
import type { Json } from './types.js';
import { WebhookLog } from './webhook-log.js';
import { WebhookRecords } from './webhook-records.js';
import type { RailWebhookReceipt } from '@affiliate-attribution/contract';
import { WEBHOOK_BODY_LIMIT } from './dispatcher.js';
import { checkPayPalWebhook, parseJsonObject } from './paypal-transmission.js';

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** A rail's event once its signature checked out, with the id a redelivery repeats. */
export interface VerifiedRailEvent {
  event: Json;
  eventId: string | null;
  eventType: string | null;
}

/** What a verified event did to the payouts. */
export interface RailOutcome {
  outcome: 'processed' | 'ignored';
  detail: string;
}
const processedRail = (detail: string): RailOutcome => ({ outcome: 'processed', detail });
const ignoredRail = (detail: string): RailOutcome => ({ outcome: 'ignored', detail });

/** What the rails' webhooks need besides the payouts: the bound on PayPal verifications. */
export interface RailWebhookDeps {
  sender: PayoutSender;
  /** Verification calls to PayPal per organization (app.ts: counted where every rate limit is, shared by the instances). */
  paypalVerifications: { limiter: RateLimiter; limit: number; windowSeconds: number };
  logger?: Logger;
}

/** Past the organization's bound on PayPal verifications: refused (429) without asking PayPal. */
export class PayPalVerificationsLimited extends HttpError {
  constructor(limit: number, windowSeconds: number, retryAfterSeconds: number) {
    super(
      429,
      `Too many PayPal webhooks to verify for this organization (at most ${limit} per ${windowSeconds} s): refused without asking PayPal; PayPal delivers the event again later`,
      { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    );
  }
}

/**
 * Counts one verification call against the organization's bound. A limiter that fails lets the
 * verification through (its stores fall back to memory first, rate-limit-stores.ts): PayPal still
 * verifies, and the bound is back with the store.
 */
async function countVerification(deps: RailWebhookDeps, organizationId: string): Promise<void> {
  const bound = deps.paypalVerifications;
  let decision;
  try {
    decision = await bound.limiter.hit(`paypal-verify:${organizationId}`);
  } catch (err) {
    deps.logger?.warn({ err, organizationId }, 'PayPal verification bound unavailable; verification allowed');
    return;
  }
  if (!decision.allowed)
    throw new PayPalVerificationsLimited(bound.limit, bound.windowSeconds, decision.retryAfterSeconds);
}

/**
 * PayPal Payouts' batch events (`PAYMENT.PAYOUTSBATCH.SUCCESS`, `.DENIED`, `.PROCESSING`: the batch is
 * read back from PayPal) and item events (`PAYMENT.PAYOUTS-ITEM.SUCCEEDED`, `.FAILED`, `.RETURNED`, `.BLOCKED`,
 * `.REFUNDED`, `.REVERSED`, `.UNCLAIMED`, `.HELD`, …: https://developer.paypal.com/api/rest/webhooks/event-names/#payouts),
 * verified by PayPal itself: POST /v1/notifications/verify-webhook-signature with the transmission
 * headers, the event and the `webhook_id` stored in the paypal_payouts integration
 * (https://developer.paypal.com/docs/api/webhooks/v1/#verify-webhook-signature_post). An event PayPal
 * does not verify is refused (400) before anything in it is read. PayPal is asked only about a
 * request that could be PayPal's (paypal-transmission.ts: headers' shapes, PayPal's certificate
 * hosts, a current transmission time, an event with its id and type), within the organization's
 * bound on verifications (429 past it), with the token the instance holds for the organization.
 */
export async function verifyPayPal(
  deps: RailWebhookDeps,
  organizationId: string,
  rawBody: Buffer,
  headers: IncomingHttpHeaders,
): Promise<VerifiedRailEvent> {
  if (!isUuid(organizationId))
    throw new BadRequestError(
      'No paypal_payouts integration is configured for this organization (PUT /api/integrations/paypal_payouts)',
    );
  const paypal = await deps.sender.paypal(organizationId);
  if (!paypal)
    throw new BadRequestError(
      'No paypal_payouts integration is configured for this organization (PUT /api/integrations/paypal_payouts)',
    );
  if (!paypal.webhookId)
    throw new BadRequestError(
      'The paypal_payouts integration has no webhook_id: store the id PayPal gave this webhook (PUT /api/integrations/paypal_payouts)',
    );
  // Everything that needs no call to PayPal first: what cannot be PayPal's costs the merchant nothing.
  const candidate = checkPayPalWebhook({ headers, rawBody, environment: paypal.environment, now: Date.now() });
  await countVerification(deps, organizationId);
  if (!(await paypal.client.verifyWebhook(candidate.transmission, candidate.event, paypal.webhookId))) {
    throw new BadRequestError('Invalid PayPal webhook signature: PayPal did not verify it (verify-webhook-signature)');
  }
  return { event: candidate.event, eventId: candidate.eventId, eventType: candidate.eventType };
}

/** A verified PayPal event: a batch event reads its batch back; an item event settles its payout. */
export async function handlePayPal(sender: PayoutSender, organizationId: string, event: Json): Promise<RailOutcome> {
  const paypal = await sender.paypal(organizationId);
  if (typeof event.event_type === 'string' && event.event_type.startsWith('PAYMENT.PAYOUTSBATCH.')) {
    const batchId = ((event.resource as Json | undefined)?.batch_header as Json | undefined)?.payout_batch_id;
    if (typeof batchId !== 'string') return ignoredRail('No batch_header.payout_batch_id in the event');
    const done = await sender.settlePayPalBatch(organizationId, batchId);
    return done.length > 0
      ? processedRail(`Payout ${done.join(', ')}`)
      : ignoredRail(`No payout of batch ${batchId} settled`);
  }
  if (typeof event.event_type !== 'string' || !event.event_type.startsWith('PAYMENT.PAYOUTS-ITEM.'))
    return ignoredRail('Event type not used by the service');
  // An item event names its payout by sender_item_id; one that does not is read back from PayPal by its payout_item_id.
  const resource = (event.resource ?? {}) as Json;
  const state =
    paypalItemState(resource) ??
    (paypal && typeof resource.payout_item_id === 'string'
      ? paypalItemState(await paypal.client.item(resource.payout_item_id))
      : undefined);
  if (!state || !isUuid(state.payout_id)) return ignoredRail('No payout of this service in the event (sender_item_id)');
  const [payout] = await sender.inFlightOf(organizationId, [state.payout_id]);
  if (!payout || payout.method !== 'paypal') return ignoredRail(`Payout ${state.payout_id} is not in flight by PayPal`);
  const done = await sender.record(organizationId, [state]);
  return done.length > 0
    ? processedRail(`Payout ${done.join(', ')}`)
    : ignoredRail(
        // eslint-disable-next-line @typescript-eslint/no-base-to-string -- PayPal's status, a string; shown as received whatever it is
        `Payout ${state.payout_id} still processing (${String((event.resource as Json | undefined)?.transaction_status ?? 'no status')})`,
      );
}

/**
 * Wise's `transfers#state-change` (https://docs.wise.com/api-docs/features/webhooks-notifications/event-types),
 * signed with Wise's RSA key: X-Signature-SHA256 is the base64 SHA256withRSA signature of the raw
 * body (https://docs.wise.com/api-docs/features/webhooks-notifications/event-handling), verified with
 * the key Wise publishes (WISE_WEBHOOK_PUBLIC_KEY).
 */
export async function verifyWise(
  _deps: RailWebhookDeps,
  _organizationId: string,
  rawBody: Buffer,
  headers: IncomingHttpHeaders,
): Promise<VerifiedRailEvent> {
  const key = payoutRailSettings().WISE_WEBHOOK_PUBLIC_KEY;
  if (!key) throw new BadRequestError('WISE_WEBHOOK_PUBLIC_KEY is not set: Wise webhooks cannot be verified');
  const signature = header(headers, 'x-signature-sha256');
  if (!signature) throw new BadRequestError('Missing X-Signature-SHA256 header');
  let valid: boolean;
  try {
    valid = createVerify('RSA-SHA256').update(rawBody).verify(key.replace(/\\n/g, '\n'), signature, 'base64');
  } catch {
    valid = false;
  }
  if (!valid) throw new BadRequestError('Invalid X-Signature-SHA256: not signed by Wise');
  const event = parseJsonObject(rawBody);
  // The delivery's id (X-Delivery-Id) stands for the event's: a request replayed with it is a duplicate. Wise's outcomes are idempotent anyway (a settled payout is not in flight).
  return {
    event,
    eventId: header(headers, 'x-delivery-id') ?? null,
    eventType: typeof event.event_type === 'string' ? event.event_type : null,
  };
}

/** A verified Wise state change: the transfer's payout, in flight, settled by the new state. */
export async function handleWise(sender: PayoutSender, organizationId: string, event: Json): Promise<RailOutcome> {
  const data = (event.data ?? {}) as Json;
  const resource = (data.resource ?? {}) as Json;
  if (event.event_type !== 'transfers#state-change' || resource.id === undefined)
    return ignoredRail('Event type not used by the service');
  if (!isUuid(organizationId)) return ignoredRail('Unknown organization');
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- Wise's transfer id, a number in every event; as text wherever it is used
  const transferId = String(resource.id);
  const payout = await sender.byReference(organizationId, 'wise', transferId);
  if (!payout || payout.status !== 'processing')
    return ignoredRail(`No payout in flight for Wise transfer ${transferId}`);
  const state = wiseTransferState(
    payout.id,
    transferId,
    typeof data.current_state === 'string' ? data.current_state : undefined,
  );
  const done = await sender.record(organizationId, [state]);
  return done.length > 0
    ? processedRail(`Payout ${done.join(', ')}`)
    : ignoredRail(`Payout ${payout.id} still processing (${String(data.current_state)})`);
}

/**
 * Stripe's `transfer.*` events, verified by the Stripe webhook route (webhooks/stripe.ts, the
 * payment integration's signing secret: transfers are events of the platform account): a transfer
 * of a payout still in flight settles it; `reversed` fails it. A transfer reversed after its payout
 * was paid is not undone here (a paid payout and its commissions stay paid): the detail says so.
 */
export async function stripeTransferEvent(
  sender: PayoutSender,
  organizationId: string,
  type: string,
  transfer: Json,
): Promise<{ changed: boolean; detail: string }> {
  const id = typeof transfer.id === 'string' ? transfer.id : undefined;
  const payoutId =
    typeof (transfer.metadata as Json | undefined)?.payout_id === 'string'
      ? String((transfer.metadata as Json).payout_id)
      : undefined;
  if (!id) return { changed: false, detail: 'Transfer without id' };
  const payout =
    (await sender.byReference(organizationId, 'stripe', id)) ??
    (payoutId && isUuid(payoutId) ? (await sender.inFlightOf(organizationId, [payoutId]))[0] : undefined);
  if (!payout) return { changed: false, detail: `No payout for Stripe transfer ${id}` };
  if (payout.status === 'paid' && (type === 'transfer.reversed' || transfer.reversed === true)) {
    return {
      changed: false,
      detail: `Payout ${payout.id} was paid before transfer ${id} was reversed: it stays paid; recover the amount with the partner`,
    };
  }
  if (payout.status !== 'processing') return { changed: false, detail: `Payout ${payout.id} is ${payout.status}` };
  const done = await sender.record(organizationId, [
    stripeTransferState(payout.id, type === 'transfer.reversed' ? { ...transfer, reversed: true } : transfer),
  ]);
  return {
    changed: done.length > 0,
    detail: done.length > 0 ? `Payout ${done.join(', ')}` : `Payout ${payout.id} unchanged`,
  };
}

interface Rail {
  provider: 'paypal_payouts' | 'wise';
  verify: typeof verifyPayPal;
  handle: typeof handlePayPal;
}

const RAILS: Record<'paypal' | 'wise', Rail> = {
  paypal: { provider: 'paypal_payouts', verify: verifyPayPal, handle: handlePayPal },
  wise: { provider: 'wise', verify: verifyWise, handle: handleWise },
};

/**
 * A rail's webhook, as the payment providers' are (dispatcher.ts): verified before anything is
 * read, a refusal (400; 429 past the bound on PayPal verifications) counted under its reason in the organization's log of received webhooks
 * (nothing of the body kept), and each verified event remembered by (organization, rail, event id)
 * with its outcome: a redelivery is answered `duplicate` and changes nothing. An event without a
 * storable id (none, or one the API's input rules refuse) is handled (outcomes are idempotent) but
 * cannot be remembered.
 */
async function receiveRail(
  deps: RailWebhookDeps,
  orm: MikroORM,
  rail: Rail,
  organizationId: string,
  rawBody: Buffer,
  headers: IncomingHttpHeaders,
): Promise<RailWebhookReceipt> {
  const { sender } = deps;
  let verified: VerifiedRailEvent;
  try {
    if (rawBody.length === 0) throw new BadRequestError('Empty webhook body');
    verified = await rail.verify(deps, organizationId, rawBody, headers);
  } catch (err) {
    // Refused before verification (400), or past the bound on PayPal verifications (429): counted under the reason.
    if ((err instanceof BadRequestError || err instanceof PayPalVerificationsLimited) && isUuid(organizationId))
      await new WebhookLog(orm).rejected(organizationId, rail.provider, err.message);
    throw err;
  }
  const { event, eventId, eventType } = verified;
  const receipt = (outcome: RailWebhookReceipt['outcome'], detail: string): RailWebhookReceipt => ({
    provider: rail.provider,
    event_id: eventId,
    event_type: eventType,
    outcome,
    detail,
  });
  const records = new WebhookRecords(orm);
  const storable =
    eventId !== null && eventType !== null && checkEvent({ id: eventId, type: eventType, payload: event }).ok;
  const known = storable && isUuid(organizationId) && (await records.landings(organizationId)) !== undefined;
  if (known && (await records.handled(organizationId, rail.provider, eventId)))
    return receipt('duplicate', 'Event already handled; nothing changed');
  const result = await rail.handle(sender, organizationId, event);
  if (known)
    await records.remember({
      organizationId,
      provider: rail.provider,
      eventId: eventId,
      eventType: eventType,
      outcome: result.outcome,
      detail: result.detail,
    });
  return receipt(result.outcome, result.detail);
}

/** POST /webhooks/paypal/{organizationId} and /webhooks/wise/{organizationId}: raw body, verified before anything is read. */
export function payoutRailWebhooksRouter(deps: RailWebhookDeps, orm: MikroORM): Router {
  const router = Router();
  const raw = express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT });
  for (const [path, rail] of Object.entries(RAILS)) {
    router.post(
      `/${path}/:organizationId`,
      raw,
      asyncHandler(async (req, res) => {
        const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const webhook = await receiveRail(deps, orm, rail, req.params.organizationId, rawBody, req.headers);
        res.status(200).json({ success: true, data: { webhook } });
      }),
    );
  }
  return router;
}
