import type { Payout } from '../../resources.js';
import { Decimal } from 'decimal.js';
import type { Logger } from 'pino';
import { minorUnitDigits } from '../../attribution/money.js';
import { PAYOUT_RAIL_HOSTS, payoutRailSettings, type PayoutRailSettings } from '../../config.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../http/errors.js';
import type { IntegrationsService } from '../integrations/integrations.service.js';
import {
  heldRefusal,
  type PayoutSendsRepository,
  type SendCandidate,
  type SendPlan,
} from './payout-sends.repository.js';
import type { PayoutRecord, PayoutsRepository } from './payouts.repository.js';
import { toPayoutDto } from './payouts.service.js';
import { PayPalPayouts } from './rails/paypal.js';
import { PayPalTokens } from './rails/paypal-tokens.js';
import {
  RAIL_INTEGRATION,
  RailRefused,
  RailUnreachable,
  sendKeys,
  type RailBatch,
  type RailClient,
  type RailItem,
  type RailMethod,
  type RailState,
} from './rails/rail.js';
import { StripeTransfers } from './rails/stripe.js';
import { WiseTransfers } from './rails/wise.js';

/** How long POST /api/payouts/send waits for the providers' answers before answering 202 anyway. */
const ANSWER_WAIT_MS = 10_000;

const RAIL_FIELDS = {
  paypal_payouts: '{ client_id, client_secret, environment, webhook_id }',
  stripe_connect: '{ secret_key }',
  wise: '{ api_token, profile_id, environment }',
} as const;

/** Why a payout cannot go by its affiliate's rail (no destination), or undefined. */
function missingDestination(c: SendCandidate): string | undefined {
  const who = `affiliate ${c.affiliate_id}`;
  if (c.payout_method === 'stripe' && !c.stripe_account_id)
    return `${who} has no stripe_account_id (Stripe Connect onboarding not finished)`;
  if (c.payout_method === 'wise' && !c.name) return `${who} has no name, which Wise needs as the account holder's`;
  if (c.email.endsWith('.invalid') && !c.payout_email) return `${who} has no payout e-mail (erased)`;
  return undefined;
}

/** The payout's amount as its provider takes it: exact, with the currency's own decimals. */
const railAmount = (c: SendCandidate) => new Decimal(c.amount_text).toFixed(minorUnitDigits(c.currency));

function railItem(c: SendCandidate): RailItem {
  return {
    payout_id: c.id,
    amount: railAmount(c),
    currency: c.currency,
    key: c.send_key!,
    reference: c.provider_reference ?? null,
    email: c.payout_email ?? c.email,
    name: c.name,
    stripe_account_id: c.stripe_account_id,
    program_name: c.program_name,
  };
}

/** Groups payouts into provider batches: one per rail and currency (and, in flight, per stored batch key). */
function batchesOf(rows: SendCandidate[]): { method: RailMethod; batch: RailBatch }[] {
  const groups = new Map<string, { method: RailMethod; batch: RailBatch }>();
  for (const row of rows) {
    const method = row.method as RailMethod;
    const key = `${method}|${row.currency}|${method === 'paypal' ? row.send_key : ''}`;
    const group = groups.get(key) ?? { method, batch: { currency: row.currency, items: [] } };
    group.batch.items.push(railItem(row));
    groups.set(key, group);
  }
  return [...groups.values()];
}

/**
 * Sending payouts through the merchant's own PayPal, Stripe Connect or Wise account
 * (shared/spec/payout-rails.md), and recording what the providers did with them.
 *
 * Never twice: a payout's idempotency key (rails/rail.ts sendKeys) is committed with its
 * `processing` status before its provider is called. The call's answer, when it arrives, records
 * the provider's ids; when it is lost (a timeout, a dropped connection, a crash before the commit),
 * the payout stays `processing` without them, and the reconciliation asks the provider by the key
 * (PayPal: the same sender_batch_id, which PayPal pays at most once and answers with the original
 * batch; Stripe: the transfer_group the key names; Wise: the same customerTransactionId, which
 * Wise answers with the existing transfer). Nothing here sends a payout under a new key.
 */
export class PayoutSender {
  private readonly inFlight = new Set<Promise<void>>();
  private failedListener: ((payout: PayoutRecord) => Promise<void>) | undefined;
  /** PayPal access tokens of this instance, shared by sending, the reconciliation and webhook verification (rails/paypal-tokens.ts). */
  readonly paypalTokens = new PayPalTokens();

  constructor(
    private readonly sends: PayoutSendsRepository,
    private readonly payouts: PayoutsRepository,
    private readonly integrations: IntegrationsService,
    private readonly logger: Logger,
    private readonly settings: () => PayoutRailSettings = () => payoutRailSettings(),
  ) {}

  async send(
    organizationId: string,
    scope: { payout_ids?: string[] | undefined; program_id?: string | undefined; currency?: string | undefined },
  ): Promise<Payout[]> {
    const ids = scope.payout_ids ? [...new Set(scope.payout_ids.map((id) => id.toLowerCase()))] : undefined;
    const candidates = await this.sends.candidates(
      organizationId,
      ids ? { payout_ids: ids } : { program_id: scope.program_id, currency: scope.currency?.toUpperCase() },
    );
    if (ids) {
      const found = new Set(candidates.map((c) => c.id));
      const missing = ids.find((id) => !found.has(id));
      if (missing) throw new NotFoundError(`Payout ${missing} not found`);
    }
    const test = await this.sends.isTestOrganization(organizationId);
    for (const c of candidates) {
      if (c.status !== 'pending')
        throw new ConflictError(`Payout ${c.id} is ${c.status}: only a pending payout can be sent`);
      // Created before its program required a form, or before the form was rejected: held all the same, as the payout run holds it.
      if (c.hold_reason) throw new ConflictError(heldRefusal(c, c.hold_reason));
      if (c.payout_method === 'manual') {
        throw new BadRequestError(
          `Payout ${c.id}: affiliate ${c.affiliate_id} is paid manually (payout_method manual): pay it with the export files (GET /api/payouts/export?format=paypal or wise) and mark it paid, or set the affiliate's payout_method to paypal, stripe or wise`,
        );
      }
      const missing = missingDestination(c);
      if (missing && !test) throw new BadRequestError(`Payout ${c.id}: ${missing}; nothing was sent`);
    }
    if (!test) {
      for (const method of new Set(candidates.map((c) => c.payout_method as RailMethod))) {
        const integration = RAIL_INTEGRATION[method];
        if (!(await this.integrations.railCredentials(organizationId, integration))) {
          throw new BadRequestError(
            `No ${integration} integration: add it with PUT /api/integrations/${integration} ${RAIL_FIELDS[integration]}; nothing was sent`,
          );
        }
      }
    }
    if (candidates.length === 0) return [];

    const plans: SendPlan[] = [];
    for (const method of ['paypal', 'stripe', 'wise'] as const) {
      for (const currency of new Set(candidates.filter((c) => c.payout_method === method).map((c) => c.currency))) {
        const group = candidates.filter((c) => c.payout_method === method && c.currency === currency);
        const keys = sendKeys(
          method,
          group.map((c) => c.id),
        );
        for (const c of group) plans.push({ id: c.id, method, send_key: keys.get(c.id)! });
      }
    }
    const claimed = await this.sends.claim(organizationId, plans, test);
    if (test) return Promise.all(candidates.map((c) => this.simulate(c).then(toPayoutDto)));

    const rows = candidates.map((c) => ({ ...c, ...claimed.find((r) => r.id === c.id)! }));
    // The calls run apart from the request (tracked, so a graceful stop waits for them); the answer
    // waits for them a bounded time, so that it shows the provider's ids when they came quickly.
    // Whatever happens to them, the payouts are already recorded as in flight under their keys.
    const work = Promise.all(
      batchesOf(rows).map(({ method, batch }) => this.dispatch(organizationId, method, batch, 'send')),
    ).then(() => undefined);
    this.track(work);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      work.catch(() => undefined),
      new Promise((resolve) => (timer = setTimeout(resolve, ANSWER_WAIT_MS))),
    ]);
    clearTimeout(timer);
    const now = await this.sends.candidates(organizationId, { payout_ids: claimed.map((r) => r.id) });
    return now.map(toPayoutDto);
  }

  /** Test mode: nothing reaches a provider; paid at once, or failed when a real send would have been refused. */
  private simulate(c: SendCandidate): Promise<PayoutRecord> {
    const missing = missingDestination(c);
    if (missing) return this.payouts.markFailed(c.organization_id, c.id, `Simulated: ${missing}`);
    return this.payouts.markPaid(c.organization_id, c.id, undefined, 'processing', `simulated_${c.id}`);
  }

  /** Called once for each payout that becomes `failed` by its provider's outcome (the partner's e-mail, failure-mail.ts). */
  onFailed(listener: (payout: PayoutRecord) => Promise<void>): void {
    this.failedListener = listener;
  }

  /** Waits for the sends started by this instance (tests; a graceful stop). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private track(work: Promise<void>): void {
    const tracked = work
      .catch((err) =>
        this.logger.error({ err }, 'payout send failed unexpectedly; the reconciliation will ask the provider'),
      )
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  /**
   * Asks the providers about every payout in flight sent before `sentBefore` (default: a few
   * seconds ago, so that a send still waiting for its answer is left to it) and records what they
   * say. Called periodically (jobs/payout-reconciliation.ts).
   */
  async reconcile(sentBefore = new Date(Date.now() - 5_000)): Promise<{ asked: number }> {
    const rows = await this.sends.allInFlight(sentBefore, 500);
    const byOrganization = new Map<string, SendCandidate[]>();
    for (const row of rows)
      byOrganization.set(row.organization_id, [...(byOrganization.get(row.organization_id) ?? []), row]);
    for (const [organizationId, own] of byOrganization) {
      for (const { method, batch } of batchesOf(own)) await this.dispatch(organizationId, method, batch, 'lookup');
    }
    return { asked: rows.length };
  }

  /** Records provider states of payouts (a verified webhook's, a lookup's): paid, failed, or the ids learnt. */
  async record(organizationId: string, states: RailState[]): Promise<string[]> {
    const done: string[] = [];
    for (const state of states) {
      try {
        if (state.outcome === 'paid') {
          await this.payouts.markPaid(organizationId, state.payout_id, undefined, 'processing', state.reference);
          done.push(`${state.payout_id} paid`);
        } else if (state.outcome === 'failed') {
          const before = await this.sends.inFlight(organizationId, [state.payout_id]);
          const failed = await this.payouts.markFailed(
            organizationId,
            state.payout_id,
            state.reason ?? 'Failed',
            state.reference,
          );
          done.push(`${state.payout_id} failed`);
          // Only the change to failed tells the partner (a redelivered outcome finds it failed already).
          if (before.length > 0 && this.failedListener) await this.failedListener(failed);
        } else if (state.reference) {
          await this.sends.recordReference(organizationId, state.payout_id, state.reference);
        }
      } catch (err) {
        // Settled before (paid, canceled): an outcome never undoes another.
        if (!(err instanceof ConflictError || err instanceof NotFoundError)) throw err;
      }
    }
    return done;
  }

  /** Payouts of this organization still in flight, among these ids. */
  inFlightOf(organizationId: string, ids: string[]): Promise<SendCandidate[]> {
    return this.sends.inFlight(organizationId, ids);
  }

  /**
   * A PayPal batch event (`PAYMENT.PAYOUTSBATCH.*`): the batch's payouts in flight are read back
   * from PayPal (GET the batch: its items' own statuses decide, a DENIED batch fails them all).
   */
  async settlePayPalBatch(organizationId: string, batchId: string): Promise<string[]> {
    const rows = await this.sends.inFlightOfPayPalBatch(organizationId, batchId);
    if (rows.length === 0) return [];
    const client = await this.client(organizationId, 'paypal');
    if (!client) return [];
    const done: string[] = [];
    for (const { batch } of batchesOf(rows))
      done.push(...(await this.record(organizationId, await client.lookup(batch))));
    return done;
  }

  byReference(organizationId: string, method: RailMethod, reference: string) {
    return this.sends.byReference(organizationId, method, reference);
  }

  private async dispatch(
    organizationId: string,
    method: RailMethod,
    batch: RailBatch,
    how: 'send' | 'lookup',
  ): Promise<void> {
    let states: RailState[];
    try {
      const client = await this.client(organizationId, method);
      if (!client) throw new RailUnreachable(`the ${RAIL_INTEGRATION[method]} integration was removed`);
      states = how === 'send' ? await client.send(batch) : await client.lookup(batch);
    } catch (err) {
      if (err instanceof RailRefused) {
        // The provider answered and took nothing: the payouts fail with its reason (their entries go to the next payout).
        states = batch.items.map((item) => ({
          payout_id: item.payout_id,
          reference: item.reference,
          outcome: 'failed',
          reason: err.message,
        }));
      } else {
        this.logger.warn(
          { err, organizationId, method, payouts: batch.items.map((i) => i.payout_id) },
          'payout rail: outcome unknown; the reconciliation will ask the provider by the idempotency key',
        );
        return;
      }
    }
    await this.record(organizationId, states);
  }

  /** The rail's client with the organization's credentials, at PAYPAL/STRIPE/WISE_API_BASE_URL or the provider's host for the environment. */
  async client(organizationId: string, method: RailMethod): Promise<RailClient | undefined> {
    const settings = this.settings();
    switch (method) {
      case 'paypal': {
        const credentials = await this.integrations.railCredentials(organizationId, 'paypal_payouts');
        return (
          credentials &&
          new PayPalPayouts(
            settings.PAYPAL_API_BASE_URL ?? PAYOUT_RAIL_HOSTS.paypal[credentials.environment],
            credentials,
            this.paypalTokens,
            organizationId,
          )
        );
      }
      case 'stripe': {
        const credentials = await this.integrations.railCredentials(organizationId, 'stripe_connect');
        return (
          credentials && new StripeTransfers(settings.STRIPE_API_BASE_URL ?? PAYOUT_RAIL_HOSTS.stripe.live, credentials)
        );
      }
      case 'wise': {
        const credentials = await this.integrations.railCredentials(organizationId, 'wise');
        return (
          credentials &&
          new WiseTransfers(settings.WISE_API_BASE_URL ?? PAYOUT_RAIL_HOSTS.wise[credentials.environment], credentials)
        );
      }
    }
  }

  /** The PayPal client for a webhook's verification (undefined without the integration), with the integration's environment and webhook id. */
  async paypal(
    organizationId: string,
  ): Promise<{ client: PayPalPayouts; webhookId: string | undefined; environment: 'sandbox' | 'live' } | undefined> {
    const credentials = await this.integrations.railCredentials(organizationId, 'paypal_payouts');
    if (!credentials) return undefined;
    const base = this.settings().PAYPAL_API_BASE_URL ?? PAYOUT_RAIL_HOSTS.paypal[credentials.environment];
    return {
      client: new PayPalPayouts(base, credentials, this.paypalTokens, organizationId),
      webhookId: credentials.webhook_id,
      environment: credentials.environment,
    };
  }
}
