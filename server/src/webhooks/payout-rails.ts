import { createVerify } from 'node:crypto';
import express, { Router } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import { payoutRailSettings } from '../config.js';
import { asyncHandler } from '../http/error-handler.js';
import { BadRequestError } from '../http/errors.js';
import { isUuid } from '../http/serialize.js';
import type { PayoutSender } from '../modules/payouts/payout-sender.js';
import { paypalItemState } from '../modules/payouts/rails/paypal.js';
import { stripeTransferState } from '../modules/payouts/rails/stripe.js';
import { wiseTransferState } from '../modules/payouts/rails/wise.js';
import type { Json } from './types.js';
import type { RailWebhookReceipt } from '@affiliate-attribution/contract';
import { WEBHOOK_BODY_LIMIT } from './dispatcher.js';

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

function parseJson(raw: Buffer): Json {
  try {
    const value = JSON.parse(raw.toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Json;
  } catch {
    // refused below
  }
  throw new BadRequestError('Malformed webhook body: expected a JSON object');
}

const PAYPAL_HEADERS = ['paypal-transmission-id', 'paypal-transmission-time', 'paypal-transmission-sig', 'paypal-cert-url', 'paypal-auth-algo'] as const;

/**
 * PayPal Payouts' batch events (`PAYMENT.PAYOUTSBATCH.SUCCESS`, `.DENIED`, `.PROCESSING`: the batch is
 * read back from PayPal) and item events (`PAYMENT.PAYOUTS-ITEM.SUCCEEDED`, `.FAILED`, `.RETURNED`, `.BLOCKED`,
 * `.REFUNDED`, `.REVERSED`, `.UNCLAIMED`, `.HELD`, …: https://developer.paypal.com/api/rest/webhooks/event-names/#payouts),
 * verified by PayPal itself: POST /v1/notifications/verify-webhook-signature with the transmission
 * headers, the event and the `webhook_id` stored in the paypal_payouts integration
 * (https://developer.paypal.com/docs/api/webhooks/v1/#verify-webhook-signature_post). An event PayPal
 * does not verify is refused (400) before anything in it is read.
 */
export async function receivePayPal(sender: PayoutSender, organizationId: string, rawBody: Buffer, headers: IncomingHttpHeaders): Promise<RailWebhookReceipt> {
  if (!isUuid(organizationId)) throw new BadRequestError('No paypal_payouts integration is configured for this organization (PUT /api/integrations/paypal_payouts)');
  const paypal = await sender.paypal(organizationId);
  if (!paypal) throw new BadRequestError('No paypal_payouts integration is configured for this organization (PUT /api/integrations/paypal_payouts)');
  if (!paypal.webhookId) throw new BadRequestError('The paypal_payouts integration has no webhook_id: store the id PayPal gave this webhook (PUT /api/integrations/paypal_payouts)');
  const missing = PAYPAL_HEADERS.filter((name) => !header(headers, name));
  if (missing.length > 0) throw new BadRequestError(`Missing PayPal webhook header(s): ${missing.map((n) => n.toUpperCase()).join(', ')}`);
  const event = parseJson(rawBody);
  const transmission = Object.fromEntries(PAYPAL_HEADERS.map((name) => [name, header(headers, name)]));
  if (!(await paypal.client.verifyWebhook(transmission, event, paypal.webhookId))) {
    throw new BadRequestError('Invalid PayPal webhook signature: PayPal did not verify it (verify-webhook-signature)');
  }
  const receipt = (outcome: RailWebhookReceipt['outcome'], detail: string): RailWebhookReceipt => ({
    provider: 'paypal_payouts',
    event_id: typeof event.id === 'string' ? event.id : null,
    event_type: typeof event.event_type === 'string' ? event.event_type : null,
    outcome,
    detail,
  });
  if (typeof event.event_type === 'string' && event.event_type.startsWith('PAYMENT.PAYOUTSBATCH.')) {
    const batchId = ((event.resource as Json | undefined)?.batch_header as Json | undefined)?.payout_batch_id;
    if (typeof batchId !== 'string') return receipt('ignored', 'No batch_header.payout_batch_id in the event');
    const done = await sender.settlePayPalBatch(organizationId, batchId);
    return done.length > 0 ? receipt('processed', `Payout ${done.join(', ')}`) : receipt('ignored', `No payout of batch ${batchId} settled`);
  }
  if (typeof event.event_type !== 'string' || !event.event_type.startsWith('PAYMENT.PAYOUTS-ITEM.')) return receipt('ignored', 'Event type not used by the service');
  // An item event names its payout by sender_item_id; one that does not is read back from PayPal by its payout_item_id.
  const resource = (event.resource ?? {}) as Json;
  const state = paypalItemState(resource) ?? (typeof resource.payout_item_id === 'string' ? paypalItemState(await paypal.client.item(resource.payout_item_id)) : undefined);
  if (!state || !isUuid(state.payout_id)) return receipt('ignored', 'No payout of this service in the event (sender_item_id)');
  const [payout] = await sender.inFlightOf(organizationId, [state.payout_id]);
  if (!payout || payout.method !== 'paypal') return receipt('ignored', `Payout ${state.payout_id} is not in flight by PayPal`);
  const done = await sender.record(organizationId, [state]);
  return done.length > 0 ? receipt('processed', `Payout ${done.join(', ')}`) : receipt('ignored', `Payout ${state.payout_id} still processing (${String((event.resource as Json | undefined)?.transaction_status ?? 'no status')})`);
}

/**
 * Wise's `transfers#state-change` (https://docs.wise.com/api-docs/features/webhooks-notifications/event-types),
 * signed with Wise's RSA key: X-Signature-SHA256 is the base64 SHA256withRSA signature of the raw
 * body (https://docs.wise.com/api-docs/features/webhooks-notifications/event-handling), verified with
 * the key Wise publishes (WISE_WEBHOOK_PUBLIC_KEY).
 */
export async function receiveWise(sender: PayoutSender, organizationId: string, rawBody: Buffer, headers: IncomingHttpHeaders): Promise<RailWebhookReceipt> {
  const key = payoutRailSettings().WISE_WEBHOOK_PUBLIC_KEY;
  if (!key) throw new BadRequestError('WISE_WEBHOOK_PUBLIC_KEY is not set: Wise webhooks cannot be verified');
  const signature = header(headers, 'x-signature-sha256');
  if (!signature) throw new BadRequestError('Missing X-Signature-SHA256 header');
  let valid = false;
  try {
    valid = createVerify('RSA-SHA256').update(rawBody).verify(key.replace(/\\n/g, '\n'), signature, 'base64');
  } catch {
    valid = false;
  }
  if (!valid) throw new BadRequestError('Invalid X-Signature-SHA256: not signed by Wise');
  const event = parseJson(rawBody);
  const data = (event.data ?? {}) as Json;
  const resource = (data.resource ?? {}) as Json;
  const receipt = (outcome: RailWebhookReceipt['outcome'], detail: string): RailWebhookReceipt => ({
    provider: 'wise',
    event_id: header(headers, 'x-delivery-id') ?? null,
    event_type: typeof event.event_type === 'string' ? event.event_type : null,
    outcome,
    detail,
  });
  if (event.event_type !== 'transfers#state-change' || resource.id === undefined) return receipt('ignored', 'Event type not used by the service');
  if (!isUuid(organizationId)) return receipt('ignored', 'Unknown organization');
  const payout = await sender.byReference(organizationId, 'wise', String(resource.id));
  if (!payout || payout.status !== 'processing') return receipt('ignored', `No payout in flight for Wise transfer ${String(resource.id)}`);
  const state = wiseTransferState(payout.id, String(resource.id), typeof data.current_state === 'string' ? data.current_state : undefined);
  const done = await sender.record(organizationId, [state]);
  return done.length > 0 ? receipt('processed', `Payout ${done.join(', ')}`) : receipt('ignored', `Payout ${payout.id} still processing (${String(data.current_state)})`);
}

/**
 * Stripe's `transfer.*` events, verified by the Stripe webhook route (webhooks/stripe.ts, the
 * payment integration's signing secret: transfers are events of the platform account): a transfer
 * of a payout still in flight settles it; `reversed` fails it. A transfer reversed after its payout
 * was paid is not undone here (a paid payout and its commissions stay paid): the detail says so.
 */
export async function stripeTransferEvent(sender: PayoutSender, organizationId: string, type: string, transfer: Json): Promise<{ changed: boolean; detail: string }> {
  const id = typeof transfer.id === 'string' ? transfer.id : undefined;
  const payoutId = typeof (transfer.metadata as Json | undefined)?.payout_id === 'string' ? String((transfer.metadata as Json).payout_id) : undefined;
  if (!id) return { changed: false, detail: 'Transfer without id' };
  const payout = (await sender.byReference(organizationId, 'stripe', id)) ?? (payoutId && isUuid(payoutId) ? (await sender.inFlightOf(organizationId, [payoutId]))[0] : undefined);
  if (!payout) return { changed: false, detail: `No payout for Stripe transfer ${id}` };
  if (payout.status === 'paid' && (type === 'transfer.reversed' || transfer.reversed === true)) {
    return { changed: false, detail: `Payout ${payout.id} was paid before transfer ${id} was reversed: it stays paid; recover the amount with the partner` };
  }
  if (payout.status !== 'processing') return { changed: false, detail: `Payout ${payout.id} is ${payout.status}` };
  const done = await sender.record(organizationId, [stripeTransferState(payout.id, type === 'transfer.reversed' ? { ...transfer, reversed: true } : transfer)]);
  return { changed: done.length > 0, detail: done.length > 0 ? `Payout ${done.join(', ')}` : `Payout ${payout.id} unchanged` };
}

/** POST /webhooks/paypal/{organizationId} and /webhooks/wise/{organizationId}: raw body, verified before anything is read. */
export function payoutRailWebhooksRouter(sender: PayoutSender): Router {
  const router = Router();
  const raw = express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT });
  const route = (receive: typeof receivePayPal) =>
    asyncHandler(async (req, res) => {
      const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (rawBody.length === 0) throw new BadRequestError('Empty webhook body');
      const webhook = await receive(sender, req.params.organizationId!, rawBody, req.headers);
      res.status(200).json({ success: true, data: { webhook } });
    });
  router.post('/paypal/:organizationId', raw, route(receivePayPal));
  router.post('/wise/:organizationId', raw, route(receiveWise));
  return router;
}
