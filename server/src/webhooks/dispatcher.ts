import express, { Router } from 'express';
import { Decimal } from 'decimal.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { WebhookOutcome, WebhookProvider, WebhookReceipt } from '@affiliate-attribution/contract';
import { Sql } from '../db/sql.js';
import { asyncHandler } from '../http/error-handler.js';
import { AttributionNotFoundError, AttributionWindowExpiredError, BadRequestError } from '../http/errors.js';
import { isUuid } from '../http/serialize.js';
import type { ConversionsService, CreateConversionInput } from '../modules/conversions/conversions.service.js';
import { findCustomerInOrganization, type CustomersService } from '../modules/customers/customers.service.js';
import { requireProvider, type IntegrationsService } from '../modules/integrations/integrations.service.js';
import { chargebeeAdapter } from './chargebee.js';
import { lemonSqueezyAdapter } from './lemonsqueezy.js';
import { paddleAdapter } from './paddle.js';
import { polarAdapter } from './polar.js';
import { stripeAdapter } from './stripe.js';
import type { CancelAction, PaymentAction, ProviderAdapter, ReferenceAction, RefundAction, VerifiedEvent, WebhookAction } from './types.js';

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

/** The referral is a click id (UUID), or a cookie id or slug (the service tells those apart). */
const referralFields = (referral: string) => (isUuid(referral) ? { click_id: referral } : { cookie_id: referral });

/** Provider times are trusted for windows, but never ahead of our clock (the API refuses the future). */
const notAfterNow = (at: Date | undefined): string | undefined => (at ? new Date(Math.min(at.getTime(), Date.now())).toISOString() : undefined);

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
 */
export class WebhookDispatcher {
  constructor(private readonly deps: WebhookServices) {}

  private sql(): Sql {
    return Sql.of(this.deps.orm);
  }

  async receive(providerName: string, organizationId: string, rawBody: Buffer, headers: import('node:http').IncomingHttpHeaders): Promise<WebhookReceipt> {
    const provider = requireProvider(providerName);
    const secret = await this.deps.integrations.signingSecret(organizationId, provider);
    if (!secret) throw new BadRequestError(`No ${provider} signing secret is configured for this organization (PUT /api/integrations/${provider})`);
    const adapter = adapters[provider];
    const event = adapter.verify(rawBody, headers, secret);

    const seen = await this.sql().one<{ outcome: string }>(
      'select outcome from webhook_events where organization_id = ? and provider = ? and event_id = ?',
      [organizationId, provider, event.id],
    );
    if (seen) return this.receipt(provider, event, 'duplicate', 'Event already handled; nothing changed');

    const actions = adapter.map(event);
    const results: ActionResult[] = [];
    for (const action of actions) results.push(await this.apply(organizationId, action));
    const outcome: WebhookOutcome = results.some((r) => r.changed) ? 'processed' : 'ignored';
    const detail = actions.length === 0 ? 'Event type not used by the service' : results.map((r) => r.detail).join('; ');
    await this.sql().rows(
      `insert into webhook_events (organization_id, provider, event_id, event_type, outcome, detail, received_at)
        values (?, ?, ?, ?, ?, ?, ?) on conflict do nothing`,
      [organizationId, provider, event.id, event.type, outcome, detail, new Date()],
    );
    return this.receipt(provider, event, outcome, detail);
  }

  private receipt(provider: WebhookProvider, event: VerifiedEvent, outcome: WebhookOutcome, detail: string | null): WebhookReceipt {
    return { provider, event_id: event.id, event_type: event.type, outcome, detail };
  }

  private apply(organizationId: string, action: WebhookAction): Promise<ActionResult> {
    switch (action.kind) {
      case 'payment':
        return this.payment(organizationId, action);
      case 'cancel':
        return this.cancel(organizationId, action);
      case 'refund':
        return this.refund(organizationId, action);
      case 'reference':
        return this.reference(organizationId, action);
    }
  }

  private async payment(organizationId: string, p: PaymentAction): Promise<ActionResult> {
    try {
      if (new Decimal(p.amount).isZero()) {
        // A free trial's checkout or a fully discounted charge: no sale, but a referred signup.
        if (!p.referral || !p.customer_id) return ignored(`Zero-amount charge ${p.external_id}: no conversion`);
        const { customer, deduped } = await this.deps.customers.create(organizationId, {
          customer_id: p.customer_id,
          ...referralFields(p.referral),
          status: 'trial',
          email: p.email,
        });
        return deduped ? ignored(`Customer ${customer.customer_id} already tracked`) : changed(`Customer ${customer.customer_id} tracked (trial)`);
      }
      const base = { external_id: p.external_id, amount: p.amount, currency: p.currency, occurred_at: notAfterNow(p.occurred_at) };
      let input: CreateConversionInput;
      if (p.referral) {
        input = { ...base, customer_id: p.customer_id, ...referralFields(p.referral) };
      } else if (p.customer_id) {
        const customer = await findCustomerInOrganization(this.sql(), organizationId, p.customer_id);
        if (!customer) return ignored(`Customer ${p.customer_id} was not referred: no conversion`);
        // A tracked customer's first payment (after a trial, say) is its initial sale; later ones recur.
        input = { ...base, customer_id: p.customer_id, kind: customer.first_conversion_at == null ? 'initial' : undefined };
      } else {
        return ignored(`Charge ${p.external_id} carries no referral and no customer`);
      }
      const { conversion, deduped } = await this.createConversion(organizationId, input);
      return deduped
        ? ignored(`Conversion ${conversion.external_id} already recorded`)
        : changed(`Conversion ${conversion.external_id} recorded (${conversion.kind}, commission ${conversion.commission_amount} ${conversion.currency})`);
    } catch (err) {
      // A referral that does not resolve never will: retrying the delivery cannot help.
      if (err instanceof AttributionNotFoundError || err instanceof AttributionWindowExpiredError) {
        return ignored(`${err.message} for ${p.external_id}`);
      }
      throw err;
    }
  }

  private async createConversion(organizationId: string, input: CreateConversionInput) {
    try {
      return await this.deps.conversions.create(organizationId, input);
    } catch (err) {
      // Another event of the same customer recorded its first conversion meanwhile: this one recurs.
      if (input.kind === 'initial' && err instanceof BadRequestError && err.message.startsWith('kind:')) {
        return this.deps.conversions.create(organizationId, { ...input, kind: undefined });
      }
      throw err;
    }
  }

  private async cancel(organizationId: string, c: CancelAction): Promise<ActionResult> {
    const customer = await findCustomerInOrganization(this.sql(), organizationId, c.customer_id);
    if (!customer) return ignored(`Customer ${c.customer_id} was not referred`);
    if (customer.status === 'canceled') return ignored(`Customer ${c.customer_id} already canceled`);
    await this.deps.customers.updateStatus(organizationId, customer.id, 'canceled');
    return changed(`Customer ${c.customer_id} canceled`);
  }

  private async refund(organizationId: string, r: RefundAction): Promise<ActionResult> {
    const externalId = await this.findExternalId(organizationId, r.candidates);
    if (!externalId) return ignored(`No conversion for ${r.candidates.join(' / ')}`);
    const conversion = await this.deps.conversions.findByExternal(organizationId, externalId);
    if (!conversion) return ignored(`No conversion for ${externalId}`);
    let amount: string | undefined;
    if ('fraction' in r.refund) amount = new Decimal(conversion.amount).times(r.refund.fraction).toDecimalPlaces(6, Decimal.ROUND_HALF_UP).toString();
    else if ('amount' in r.refund) amount = Decimal.min(new Decimal(r.refund.amount), new Decimal(conversion.amount)).toString();
    const result = await this.deps.conversions.refund(organizationId, conversion.id, { amount, refund_key: r.refund_key });
    return result.deduped
      ? ignored(`Refund of ${externalId} already recorded`)
      : changed(`Refund of ${externalId} recorded (status ${result.conversion.status}, commission ${result.conversion.commission_amount})`);
  }

  private async findExternalId(organizationId: string, candidates: string[]): Promise<string | undefined> {
    const sql = this.sql();
    for (const candidate of candidates) {
      const direct = await sql.one('select 1 from conversions where organization_id = ? and external_id = ?', [organizationId, candidate]);
      if (direct) return candidate;
      const ref = await sql.one<{ external_id: string }>('select external_id from payment_references where organization_id = ? and reference = ?', [
        organizationId,
        candidate,
      ]);
      if (ref) return ref.external_id;
    }
    return undefined;
  }

  private async reference(organizationId: string, r: ReferenceAction): Promise<ActionResult> {
    const rows = await this.sql().rows(
      `insert into payment_references (organization_id, reference, external_id, created_at) values (?, ?, ?, ?)
        on conflict do nothing returning reference`,
      [organizationId, r.reference, r.external_id, new Date()],
    );
    return rows.length > 0 ? changed(`Payment ${r.reference} linked to ${r.external_id}`) : ignored(`Payment ${r.reference} already linked`);
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


