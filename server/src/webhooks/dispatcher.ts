import express, { Router } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { WebhookOutcome, WebhookProvider, WebhookReceipt } from '@affiliate-attribution/contract';
import { PROVIDER_CHANNEL } from '../charges/channels.js';
import type { CancellationOutcome, ChargeOutcome, RefundOutcome } from '../charges/record.js';
import type { ChargeRecorder } from '../modules/conversions/charge-recorder.js';
import { asyncHandler } from '../http/error-handler.js';
import { BadRequestError } from '../http/errors.js';
import { isUuid } from '../http/serialize.js';
import { echoInput } from '../http/validation-message.js';
import { requireProvider, type IntegrationsService } from '../modules/integrations/integrations.service.js';
import { chargebeeAdapter } from './chargebee.js';
import { WebhookRecords } from './webhook-records.js';
import { WebhookLog } from './webhook-log.js';
import { lemonSqueezyAdapter } from './lemonsqueezy.js';
import { paddleAdapter } from './paddle.js';
import { polarAdapter } from './polar.js';
import { stripeAdapter } from './stripe.js';
import { checkAction, checkEvent } from './input-rules.js';
import { eventFlag, landingMode } from './mode.js';
import type { Json, ProviderAdapter, VerifiedEvent, WebhookAction } from './types.js';
import type { PayoutSender } from '../modules/payouts/payout-sender.js';
import { stripeTransferEvent } from './payout-rails.js';

export const adapters: Record<WebhookProvider, ProviderAdapter> = {
  stripe: stripeAdapter,
  paddle: paddleAdapter,
  lemonsqueezy: lemonSqueezyAdapter,
  polar: polarAdapter,
  chargebee: chargebeeAdapter,
};

export const WEBHOOK_BODY_LIMIT = '1mb';

interface ActionResult {
  changed: boolean;
  detail: string;
}

const ignored = (detail: string): ActionResult => ({ changed: false, detail });
const changed = (detail: string): ActionResult => ({ changed: true, detail });

function chargeResult(outcome: ChargeOutcome<typeof PROVIDER_CHANNEL>): ActionResult {
  switch (outcome.recorded) {
    case 'nothing':
      return ignored(outcome.reason);
    case 'signup':
      return outcome.deduped
        ? ignored(`Customer ${outcome.customer.customer_id} already tracked`)
        : changed(`Customer ${outcome.customer.customer_id} tracked (trial)`);
    case 'conversion': {
      const c = outcome.conversion;
      return outcome.deduped
        ? ignored(`Conversion ${c.external_id} already recorded`)
        : changed(`Conversion ${c.external_id} recorded (${c.kind}, commission ${c.commission_amount} ${c.currency})`);
    }
  }
}

function refundResult(externalId: string, outcome: RefundOutcome<typeof PROVIDER_CHANNEL>): ActionResult {
  if (outcome.recorded === 'nothing') return ignored(outcome.reason);
  const c = outcome.conversion;
  return outcome.deduped
    ? ignored(`Refund of ${externalId} already recorded`)
    : changed(`Refund of ${externalId} recorded (status ${c.status}, commission ${c.commission_amount})`);
}

function cancellationResult(customerId: string, outcome: CancellationOutcome<typeof PROVIDER_CHANNEL>): ActionResult {
  if (outcome.recorded === 'nothing') return ignored(outcome.reason);
  return outcome.deduped
    ? ignored(`Customer ${customerId} already canceled`)
    : changed(`Customer ${customerId} canceled`);
}

/** An id as a receipt may repeat it when it broke the rules: bounded, without NUL characters or lone surrogates. */
const printable = (value: string) => echoInput(value.replaceAll('\u0000', '\ufffd').replace(/\p{Cs}/gu, '\ufffd'));

export interface WebhookServices {
  orm: MikroORM;
  integrations: IntegrationsService;
  charges: ChargeRecorder;
  /** Stripe Connect's `transfer.*` events settle payouts sent by the stripe rail (webhooks/payout-rails.ts). */
  payoutSender?: PayoutSender;
}

/**
 * A provider's webhook: verify (the adapter, with the signing secret of the live organization or
 * of its test twin, whichever verifies) and choose the organization the event lands in (mode.ts:
 * the event's own test flag, else which secret vouched for it; a test event never lands live), map (the
 * adapter: the event's charges, refunds, cancellations, other ids of a charge), check what was
 * mapped against the API's input rules (input-rules.ts), and record it through charges/record.ts
 * under the providers' policy (charges/channels.ts, PROVIDER_CHANNEL): what a payment, a refund or
 * a cancel means is decided there, the same as for the API. What stays here is the event itself:
 * each handled event is remembered by (organization, provider, event id), so per mode, and a redelivery is
 * answered `duplicate` and changes nothing, even where replaying it would (a cancel redelivered
 * after a reactivation); every action is idempotent on its own as well (conversions by
 * external_id, refunds by refund key), which covers two deliveries racing; and the receipt.
 *
 * An event the rules refuse will never succeed: it is answered 200 `ignored` with the reason and
 * remembered like any handled event, so the provider stops retrying it (a 4xx or 5xx would make it
 * retry for days) and a redelivery is a `duplicate`. Only a failure on our side (5xx) makes the
 * provider retry.
 */
export class WebhookDispatcher {
  private readonly records: WebhookRecords;
  private readonly log: WebhookLog;

  constructor(private readonly deps: WebhookServices) {
    this.records = new WebhookRecords(deps.orm);
    this.log = new WebhookLog(deps.orm);
  }

  async receive(
    providerName: string,
    organizationId: string,
    rawBody: Buffer,
    headers: import('node:http').IncomingHttpHeaders,
  ): Promise<WebhookReceipt> {
    const provider = requireProvider(providerName);
    const { event, landedIn } = await this.verified(provider, organizationId, rawBody, headers);
    const eventKeys = checkEvent(event);
    if (!eventKeys.ok) {
      // Its id cannot be stored, so it cannot be remembered either: ignored again on every redelivery.
      const shown = { ...event, id: printable(event.id), type: printable(event.type) };
      return this.receipt(
        provider,
        shown,
        'ignored',
        `Not recorded, refused by the API's input rules: ${eventKeys.reason}`,
      );
    }

    // Remembered per organization, so per mode: the same event id may land once in live and once in test.
    if (await this.records.handled(landedIn, provider, event.id))
      return this.receipt(provider, event, 'duplicate', 'Event already handled; nothing changed');

    if (provider === 'stripe' && event.type.startsWith('transfer.') && this.deps.payoutSender) {
      const transfer = (event.payload.data as { object?: Json } | undefined)?.object ?? {};
      const result = await stripeTransferEvent(this.deps.payoutSender, landedIn, event.type, transfer);
      const outcome: WebhookOutcome = result.changed ? 'processed' : 'ignored';
      await this.records.remember({
        organizationId: landedIn,
        provider,
        eventId: event.id,
        eventType: event.type,
        outcome,
        detail: result.detail,
      });
      return this.receipt(provider, event, outcome, result.detail);
    }

    const actions = adapters[provider].map(event);
    const results: ActionResult[] = [];
    for (const action of actions) results.push(await this.apply(landedIn, action));
    const outcome: WebhookOutcome = results.some((r) => r.changed) ? 'processed' : 'ignored';
    const detail =
      actions.length === 0
        ? 'Event type not used by the service, or nothing in it to record'
        : results.map((r) => r.detail).join('; ');
    await this.records.remember({
      organizationId: landedIn,
      provider,
      eventId: event.id,
      eventType: event.type,
      outcome,
      detail,
    });
    return this.receipt(provider, event, outcome, detail);
  }

  /**
   * The event, verified with the provider's secret of the live organization or of its test twin
   * (whichever verifies), and the organization it lands in (mode.ts: the event's own flag first,
   * then which secret vouched for it). A request refused here (400) is counted in the log of the
   * organization whose integration it was meant for (the live one, or the twin when only the twin
   * has one), and nothing of its body is kept: it was not verified.
   */
  private async verified(
    provider: WebhookProvider,
    organizationId: string,
    rawBody: Buffer,
    headers: import('node:http').IncomingHttpHeaders,
  ): Promise<{ event: VerifiedEvent; landedIn: string }> {
    let logIn: string | undefined = isUuid(organizationId) ? organizationId : undefined;
    try {
      if (rawBody.length === 0) throw new BadRequestError('Empty webhook body');
      const landings = logIn ? await this.records.landings(organizationId) : undefined;
      const liveSecret = landings?.live
        ? await this.deps.integrations.signingSecret(landings.live, provider)
        : undefined;
      const testSecret = landings?.test
        ? await this.deps.integrations.signingSecret(landings.test, provider)
        : undefined;
      if (landings && !liveSecret && testSecret) logIn = landings.test;
      if (!landings || (!liveSecret && !testSecret)) {
        throw new BadRequestError(
          `No ${provider} signing secret is configured for this organization (PUT /api/integrations/${provider})`,
        );
      }
      const adapter = adapters[provider];
      let event: VerifiedEvent | undefined;
      let refusal: unknown;
      let verifiedByLive = false;
      let verifiedByTest = false;
      for (const [secret, mode] of [
        [liveSecret, 'live'],
        [testSecret, 'test'],
      ] as const) {
        if (!secret) continue;
        try {
          event = adapter.verify(rawBody, headers, secret);
          if (mode === 'live') verifiedByLive = true;
          else verifiedByTest = true;
        } catch (err) {
          refusal ??= err;
        }
      }
      if (!event) throw refusal;
      const mode = landingMode({
        urlIsTest: landings.urlIsTest,
        verifiedByLive,
        verifiedByTest,
        flag: eventFlag(provider, event),
      });
      // A test event lands in the twin even where the twin has no integration of its own (it was signed with the live secret).
      const landedIn = mode === 'live' ? landings.live : landings.test;
      if (!landedIn) throw new BadRequestError('This organization has no test data to record a test event in');
      return { event, landedIn };
    } catch (err) {
      if (err instanceof BadRequestError && logIn) await this.log.rejected(logIn, provider, err.message);
      throw err;
    }
  }

  private receipt(
    provider: WebhookProvider,
    event: VerifiedEvent,
    outcome: WebhookOutcome,
    detail: string | null,
  ): WebhookReceipt {
    return { provider, event_id: event.id, event_type: event.type, outcome, detail };
  }

  /** Verified and mapped: the action, checked against the API's input rules, recorded by charges/record.ts under the providers' policy. */
  private async apply(organizationId: string, action: WebhookAction): Promise<ActionResult> {
    const checked = checkAction(action);
    if (!checked.ok) return ignored(`Refused by the API's input rules: ${checked.reason}`);
    const { charges } = this.deps;
    const valid = checked.value;
    switch (valid.kind) {
      case 'payment':
        return chargeResult(
          await charges.recordCharge(
            organizationId,
            { ...valid.conversion, ...valid.referral, email: valid.email, coupon: valid.coupon },
            PROVIDER_CHANNEL,
          ),
        );
      case 'cancel':
        return cancellationResult(
          valid.customer_id,
          await charges.recordCancellation(organizationId, valid.customer_id, PROVIDER_CHANNEL),
        );
      case 'refund': {
        const externalId = await this.records.externalIdFor(organizationId, valid.candidates);
        if (!externalId) return ignored(`No conversion for ${valid.candidates.join(' / ')}`);
        const report = { measure: valid.refund, refundId: valid.refund_id };
        return refundResult(
          externalId,
          await charges.recordRefund(organizationId, externalId, report, PROVIDER_CHANNEL),
        );
      }
      case 'reference':
        return (await this.records.linkReference(organizationId, valid.reference, valid.external_id))
          ? changed(`Payment ${valid.reference} linked to ${valid.external_id}`)
          : ignored(`Payment ${valid.reference} already linked`);
    }
  }
}

/**
 * POST /webhooks/{provider}/{organizationId}. Mounted before any JSON parser: the signature is
 * computed over the raw bytes, and nothing is parsed before it checks out.
 */
export function webhooksRouter(dispatcher: WebhookDispatcher): Router {
  const router = Router();
  router.post(
    '/:provider/:organizationId',
    express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT }),
    asyncHandler(async (req, res) => {
      const provider = req.params.provider;
      requireProvider(provider);
      const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const webhook = await dispatcher.receive(provider, req.params.organizationId, rawBody, req.headers);
      res.status(200).json({ success: true, data: { webhook } });
    }),
  );
  return router;
}
