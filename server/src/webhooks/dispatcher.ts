import express, { Router } from 'express';
import { Decimal } from 'decimal.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { WebhookOutcome, WebhookProvider, WebhookReceipt } from '@affiliate-attribution/contract';
import { asyncHandler } from '../http/error-handler.js';
import { BadRequestError, HttpError } from '../http/errors.js';
import { echoInput } from '../http/validation-message.js';
import type { ConversionsService, CreateConversionInput } from '../modules/conversions/conversions.service.js';
import { findCustomerInOrganization, type CustomersService } from '../modules/customers/customers.service.js';
import { requireProvider, type IntegrationsService } from '../modules/integrations/integrations.service.js';
import { chargebeeAdapter } from './chargebee.js';
import { WebhookRecords } from './webhook-records.js';
import { lemonSqueezyAdapter } from './lemonsqueezy.js';
import { paddleAdapter } from './paddle.js';
import { polarAdapter } from './polar.js';
import { stripeAdapter } from './stripe.js';
import { checkAction, checkEvent, type CheckedAction, type CheckedPayment } from './input-rules.js';
import { type CancelAction, type ProviderAdapter, type ReferenceAction, type RefundAction, type VerifiedEvent, type WebhookAction } from './types.js';

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

/**
 * A refusal the API would answer with a 4xx (no attribution, a click window passed, an input rule
 * of a service) is refused the same way on every retry of the same event: permanent. A 429 or a
 * 5xx may pass later, so those still fail the delivery and the provider retries.
 */
const isPermanentRefusal = (err: unknown): err is HttpError => err instanceof HttpError && err.status >= 400 && err.status < 500 && err.status !== 429;

/** What an action concerns, for its detail: values already checked (no NUL, at most 255 characters). */
function subjectOf(action: CheckedAction): string {
  switch (action.kind) {
    case 'payment':
      return action.conversion.external_id;
    case 'cancel':
      return action.customer_id;
    case 'refund':
      return action.candidates.join(' / ');
    case 'reference':
      return action.reference;
  }
}

/** An id as a receipt may repeat it when it broke the rules: bounded, and without NUL characters. */
const printable = (value: string) => echoInput(value.replaceAll('\u0000', '\ufffd'));

export interface WebhookServices {
  orm: MikroORM;
  integrations: IntegrationsService;
  customers: CustomersService;
  conversions: ConversionsService;
}

/**
 * Verifies provider events and maps them onto the same services the REST API uses: the
 * attribution rules live there only. Each handled event is recorded by (organization, provider,
 * event id), so a redelivery is answered `duplicate` and changes nothing, even where replaying it
 * would (a cancel redelivered after a reactivation); every action is idempotent on its own as well
 * (conversions by external_id, refunds by refund key), which covers two deliveries racing.
 *
 * What an adapter maps passes the API's own input rules first (input-rules.ts). A genuine event
 * that breaks them, or that a service refuses as the API would with a 4xx, will never succeed:
 * it is answered 200 `ignored` with the reason and remembered like any handled event, so the
 * provider stops retrying it (a 4xx or 5xx would make it retry for days) and a redelivery is a
 * `duplicate`. Only a failure on our side (5xx) makes the provider retry.
 */
export class WebhookDispatcher {
  private readonly records: WebhookRecords;

  constructor(private readonly deps: WebhookServices) {
    this.records = new WebhookRecords(deps.orm);
  }

  async receive(providerName: string, organizationId: string, rawBody: Buffer, headers: import('node:http').IncomingHttpHeaders): Promise<WebhookReceipt> {
    const provider = requireProvider(providerName);
    const secret = await this.deps.integrations.signingSecret(organizationId, provider);
    if (!secret) throw new BadRequestError(`No ${provider} signing secret is configured for this organization (PUT /api/integrations/${provider})`);
    const adapter = adapters[provider];
    const event = adapter.verify(rawBody, headers, secret);
    const eventKeys = checkEvent(event);
    if (!eventKeys.ok) {
      // Its id cannot be stored, so it cannot be remembered either: ignored again on every redelivery.
      const shown = { ...event, id: printable(event.id), type: printable(event.type) };
      return this.receipt(provider, shown, 'ignored', `Not recorded, refused by the API's input rules: ${eventKeys.reason}`);
    }

    if (await this.records.handled(organizationId, provider, event.id)) return this.receipt(provider, event, 'duplicate', 'Event already handled; nothing changed');

    const actions = adapter.map(event);
    const results: ActionResult[] = [];
    for (const action of actions) results.push(await this.apply(organizationId, action));
    const outcome: WebhookOutcome = results.some((r) => r.changed) ? 'processed' : 'ignored';
    const detail = actions.length === 0 ? 'Event type not used by the service, or nothing in it to record' : results.map((r) => r.detail).join('; ');
    await this.records.remember({ organizationId, provider, eventId: event.id, eventType: event.type, outcome, detail });
    return this.receipt(provider, event, outcome, detail);
  }

  private receipt(provider: WebhookProvider, event: VerifiedEvent, outcome: WebhookOutcome, detail: string | null): WebhookReceipt {
    return { provider, event_id: event.id, event_type: event.type, outcome, detail };
  }

  private async apply(organizationId: string, action: WebhookAction): Promise<ActionResult> {
    const checked = checkAction(action);
    if (!checked.ok) return ignored(`Refused by the API's input rules: ${checked.reason}`);
    const valid = checked.value;
    try {
      switch (valid.kind) {
        case 'payment':
          return await this.payment(organizationId, valid);
        case 'cancel':
          return await this.cancel(organizationId, valid);
        case 'refund':
          return await this.refund(organizationId, valid);
        case 'reference':
          return await this.reference(organizationId, valid);
      }
    } catch (err) {
      if (isPermanentRefusal(err)) return ignored(`${err.message} for ${subjectOf(valid)}`);
      throw err;
    }
  }

  private async payment(organizationId: string, p: CheckedPayment): Promise<ActionResult> {
    const { conversion: base, referral } = p;
    if (new Decimal(base.amount).isZero()) {
      // A free trial's checkout or a fully discounted charge: no sale, but a referred signup.
      if (!referral || !base.customer_id) return ignored(`Zero-amount charge ${base.external_id}: no conversion`);
      const { customer, deduped } = await this.deps.customers.create(organizationId, { customer_id: base.customer_id, ...referral, status: 'trial', email: p.email });
      return deduped ? ignored(`Customer ${customer.customer_id} already tracked`) : changed(`Customer ${customer.customer_id} tracked (trial)`);
    }
    let input: CreateConversionInput;
    if (referral) {
      input = { ...base, ...referral };
    } else if (base.customer_id) {
      const customer = await findCustomerInOrganization(this.deps.orm, organizationId, base.customer_id);
      if (!customer) return ignored(`Customer ${base.customer_id} was not referred: no conversion`);
      // A tracked customer's first payment (after a trial, say) is its initial sale; later ones recur.
      input = { ...base, firstChargeByCustomer: 'initial' };
    } else {
      return ignored(`Charge ${base.external_id} carries no referral and no customer`);
    }
    const { conversion, deduped } = await this.deps.conversions.create(organizationId, input);
    return deduped
      ? ignored(`Conversion ${conversion.external_id} already recorded`)
      : changed(`Conversion ${conversion.external_id} recorded (${conversion.kind}, commission ${conversion.commission_amount} ${conversion.currency})`);
  }

  private async cancel(organizationId: string, c: CancelAction): Promise<ActionResult> {
    const customer = await findCustomerInOrganization(this.deps.orm, organizationId, c.customer_id);
    if (!customer) return ignored(`Customer ${c.customer_id} was not referred`);
    if (customer.status === 'canceled') return ignored(`Customer ${c.customer_id} already canceled`);
    await this.deps.customers.updateStatus(organizationId, customer.id, 'canceled');
    return changed(`Customer ${c.customer_id} canceled`);
  }

  private async refund(organizationId: string, r: RefundAction): Promise<ActionResult> {
    const externalId = await this.records.externalIdFor(organizationId, r.candidates);
    if (!externalId) return ignored(`No conversion for ${r.candidates.join(' / ')}`);
    const conversion = await this.deps.conversions.findByExternal(organizationId, externalId);
    if (!conversion) return ignored(`No conversion for ${externalId}`);
    // The same rules as the API's refunds (attribution/refunds.ts): amount, rounding, refusal.
    const result = await this.deps.conversions.refund(organizationId, conversion.id, { measure: r.refund, refundId: r.refund_id });
    return result.deduped
      ? ignored(`Refund of ${externalId} already recorded`)
      : changed(`Refund of ${externalId} recorded (status ${result.conversion.status}, commission ${result.conversion.commission_amount})`);
  }

  private async reference(organizationId: string, r: ReferenceAction): Promise<ActionResult> {
    return (await this.records.linkReference(organizationId, r.reference, r.external_id)) ? changed(`Payment ${r.reference} linked to ${r.external_id}`) : ignored(`Payment ${r.reference} already linked`);
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
      const provider = req.params.provider!;
      requireProvider(provider);
      const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (rawBody.length === 0) throw new BadRequestError('Empty webhook body');
      const webhook = await dispatcher.receive(provider, req.params.organizationId!, rawBody, req.headers);
      res.status(200).json({ success: true, data: { webhook } });
    }),
  );
  return router;
}


