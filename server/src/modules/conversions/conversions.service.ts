import type { MikroORM } from '@mikro-orm/postgresql';
import type { Conversion } from '../../resources.js';
import { LRUCache } from 'lru-cache';
import type { ConversionKind } from '../../attribution/kind.js';
import { resolveOccurredAt } from '../../attribution/occurred-at.js';
import { hasClickAttribution, type Attribution, type ClickAttributionInput } from '../../attribution/resolver.js';
import type { AttributionResolver } from '../referrals/attribution-resolver.js';
import type { ChannelPolicy } from '../../charges/channels.js';
import type { HoldReason } from '../../charges/fraud.js';
import { SaleTerms } from './sale-terms.js';
import type { CommissionRule } from '../../attribution/commission.js';
import type { AppliedRate } from '../../attribution/program-rules.js';
import type { ClicksRepository } from '../clicks/clicks.repository.js';
import {
  chargeCurrency,
  decideCharge,
  decideRefund,
  type ChargeDecision,
  type RefundReport,
} from '../../charges/decision.js';
import { AttributionNotFoundError, ServiceUnavailableError } from '../../http/errors.js';
import { decodeCursor, pageLimit, pageOf } from '../../http/pagination.js';
import { decimalToNumber, iso, isoOrNull } from '../../http/serialize.js';
import { saleApprovesAt, type SaleEntryProgram } from '../commissions/commission-lifecycle.js';
import {
  findCustomerInOrganization,
  type CustomerInserter,
  type CustomerRecord,
} from '../customers/customers.service.js';
import { orRepeatOnRefusal } from '../idempotent-repeat.js';
import type { ConversionsRepository, ConversionRecord, NewSale } from './conversions.repository.js';
import { newRowId } from '../../db/row-ids.js';

export type { ConversionRecord } from './conversions.repository.js';

export function toConversionDto(c: ConversionRecord): Conversion {
  return {
    id: c.id,
    external_id: c.external_id,
    amount: decimalToNumber(c.amount),
    currency: c.currency,
    kind: c.kind,
    commission_amount: decimalToNumber(c.commission_amount),
    status: c.status ?? 'approved',
    refunded_amount: decimalToNumber(c.refunded_amount ?? '0'),
    reversed_at: isoOrNull(c.reversed_at),
    customer_id: c.customer_id ?? null,
    affiliate_id: c.affiliate_id,
    program_id: c.program_id,
    click_id: c.click_id ?? null,
    occurred_at: iso(c.occurred_at),
    created_at: iso(c.created_at),
  };
}

export interface CreateConversionInput extends ClickAttributionInput {
  external_id: string;
  amount: number | string;
  currency?: string;
  customer_id?: string;
  kind?: ConversionKind;
  occurred_at?: string;
  /** The customer's e-mail (a provider's payload): kept when the charge creates its customer; the fraud rules read it. */
  email?: string | undefined;
}

export interface ConversionListQuery {
  limit?: number;
  cursor?: string;
  customer_id?: string;
  affiliate_id?: string;
  program_id?: string;
  from?: string;
  to?: string;
}

/** The rate a sale earns, as the commission rule decideCharge applies. */
const rateRule = (rate: AppliedRate): CommissionRule => ({ commission_type: rate.type, commission_value: rate.value });

/** A few re-decisions cover any realistic contention: each one follows another charge's success. */
const MAX_OPTIMISTIC_ATTEMPTS = 20;

/**
 * The conversions use cases: gathering what a charge or a refund is decided on, asking the
 * decision (charges/decision.ts), and storing its outcome (conversions.repository.ts). Channels
 * reach them through charge-recorder.ts, with their policy (charges/channels.ts).
 */
export class ConversionsService {
  /**
   * Customers as this instance last wrote or read them, by `organization:customer_id`: a renewal
   * decides on this copy and skips reading the customer. Safe when stale (another instance, a
   * status change, a webhook): the guarded write checks first_conversion_at and status in
   * PostgreSQL, and on a mismatch the entry is dropped and the decision made again on a fresh read.
   * The other fields (attribution) never change once a customer exists.
   */
  private readonly customerStates = new LRUCache<string, CustomerRecord>({ max: 10_000 });

  private readonly terms: SaleTerms;

  /**
   * The organization's rows were deleted in bulk (a test-data reset, its deletion, an import's undo:
   * db/change-notifications.ts `organization_rows`): its customers' states and clicks' facts are
   * dropped, since a customer or click re-created with the same id is another row.
   */
  forgetOrganization(organizationId: string): void {
    const prefix = `${organizationId}:`;
    for (const key of [...this.customerStates.keys()]) if (key.startsWith(prefix)) this.customerStates.delete(key);
    this.terms.forgetOrganization(organizationId);
  }

  /** Change notifications may have been missed (the listener reconnected): every copy is read again. */
  forgetAll(): void {
    this.customerStates.clear();
    this.terms.forgetAll();
  }

  constructor(
    private readonly orm: MikroORM,
    /** The module's repository, given by the composition root (services.ts). */
    private readonly repository: ConversionsRepository,
    private readonly resolver: AttributionResolver,
    private readonly customers: CustomerInserter,
    clicks: Pick<ClicksRepository, 'findFacts'>,
  ) {
    this.terms = new SaleTerms(resolver, {
      tierMetric: (...args) => this.repository.tierMetric(...args),
      clickFacts: (organizationId, clickId) => clicks.findFacts(organizationId, clickId),
    });
  }

  /**
   * Records a charge once per (organization, external_id), in as few round trips as the rules
   * allow:
   * - by click alone: resolve (cached), decide, then one INSERT ... ON CONFLICT (batched);
   * - with a customer: read it (or take this instance's copy, customerStates), decide, then one
   *   guarded statement (batched) that writes only if the customer is still in the state the
   *   decision was made on, else read it and decide again.
   * A repeat of an earlier request returns the existing conversion (deduped), even when the same
   * request would no longer be valid now (a click window has passed since, say).
   */
  async create(
    organizationId: string,
    input: CreateConversionInput,
    channel: ChannelPolicy,
  ): Promise<{ conversion: Conversion; deduped: boolean }> {
    const occurredAt = resolveOccurredAt(input.occurred_at);
    const byClick = hasClickAttribution(input);
    const created = await orRepeatOnRefusal(
      async () => {
        for (let attempt = 0; attempt < MAX_OPTIMISTIC_ATTEMPTS; attempt++) {
          const outcome = input.customer_id
            ? await this.createForCustomer(
                organizationId,
                input,
                input.customer_id,
                byClick,
                occurredAt,
                channel,
                attempt === 0,
              )
            : await this.createByClick(organizationId, input, occurredAt, channel);
          if (outcome === 'customer-changed') continue;
          if (outcome) return { conversion: toConversionDto(outcome), deduped: false };
          const raced = await this.repository.findByExternalId(organizationId, input.external_id);
          if (!raced) throw new Error('conversion insert conflicted but no row was found');
          return { conversion: toConversionDto(raced), deduped: true };
        }
        throw new ServiceUnavailableError('The customer is changing too fast; retry');
      },
      () => this.repository.findByExternalId(organizationId, input.external_id),
    );
    return 'repeat' in created ? { conversion: toConversionDto(created.repeat), deduped: true } : created.done;
  }

  /** undefined: the external_id exists already. */
  private async createByClick(
    organizationId: string,
    input: CreateConversionInput,
    occurredAt: Date,
    channel: ChannelPolicy,
  ): Promise<ConversionRecord | undefined> {
    const attribution = await this.resolver.resolveClick(organizationId, input, occurredAt);
    const program = await this.resolver.programRule(organizationId, attribution.program_id);
    const terms = await this.terms.of({
      organizationId,
      program,
      affiliateId: attribution.affiliate_id,
      clickId: attribution.click_id,
      customerEmail: input.email,
      occurredAt,
    });
    const decision = decideCharge(
      {
        amount: input.amount,
        currency: input.currency,
        requestedKind: input.kind,
        byClick: true,
        customer: undefined,
        program,
        rate: rateRule(terms.rate),
        occurredAt,
      },
      channel,
    );
    return this.repository.insertByClick(
      this.newSale(organizationId, input, decision, null, attribution, occurredAt, program, terms),
    );
  }

  private async createForCustomer(
    organizationId: string,
    input: CreateConversionInput,
    customerId: string,
    byClick: boolean,
    occurredAt: Date,
    channel: ChannelPolicy,
    mayUseCachedCustomer: boolean,
  ): Promise<ConversionRecord | undefined | 'customer-changed'> {
    const stateKey = `${organizationId}:${customerId}`;
    let customer =
      (mayUseCachedCustomer ? this.customerStates.get(stateKey) : undefined) ??
      (await findCustomerInOrganization(this.orm, organizationId, customerId));
    if (!customer) {
      if (!byClick) throw new AttributionNotFoundError();
      const fromClick = await this.resolver.resolveClick(organizationId, input, occurredAt);
      // The charge is checked before the customer is created: a refused request writes nothing.
      chargeCurrency(
        input.amount,
        input.currency,
        await this.resolver.programRule(organizationId, fromClick.program_id),
      );
      ({ customer } = await this.customers.insertOnce(
        organizationId,
        { customer_id: customerId, status: 'active', email: input.email },
        fromClick,
      ));
    }
    const program = await this.resolver.programRule(organizationId, customer.program_id);
    const observedFirst = customer.first_conversion_at == null ? null : new Date(customer.first_conversion_at);
    const observedPaid = customer.paid_conversions ?? 0;
    const attribution = {
      affiliate_id: customer.affiliate_id,
      program_id: customer.program_id,
      click_id: customer.click_id ?? null,
    };
    const terms = await this.terms.of({
      organizationId,
      program,
      affiliateId: attribution.affiliate_id,
      clickId: attribution.click_id,
      customerEmail: customer.email ?? input.email,
      occurredAt,
    });
    const decision = decideCharge(
      {
        amount: input.amount,
        currency: input.currency,
        requestedKind: input.kind,
        byClick,
        customer: { status: customer.status, firstConversionAt: observedFirst, paidConversions: observedPaid },
        program,
        rate: rateRule(terms.rate),
        occurredAt,
      },
      channel,
    );
    const next = decision.customer!;
    const nextPaid = next.paidConversions ?? observedPaid;
    const row = await this.repository.insertForCustomer(
      {
        id: customer.id,
        observedFirstConversionAt: observedFirst,
        observedStatus: customer.status,
        observedPaidConversions: observedPaid,
        nextFirstConversionAt: next.firstConversionAt,
        nextStatus: next.status,
        nextPaidConversions: nextPaid,
      },
      this.newSale(organizationId, input, decision, customer.customer_id, attribution, occurredAt, program, terms),
    );
    if (!row.guarded) {
      this.customerStates.delete(stateKey);
      return 'customer-changed';
    }
    // The customer as it is now: updated by this write if the conversion was inserted, else as it was.
    this.customerStates.set(
      stateKey,
      row.conversion
        ? { ...customer, first_conversion_at: next.firstConversionAt, status: next.status, paid_conversions: nextPaid }
        : customer,
    );
    return row.conversion;
  }

  /** The conversion to store, and when its sale entry (written with it when it earned something) approves itself. */
  private newSale(
    organizationId: string,
    input: CreateConversionInput,
    decision: ChargeDecision,
    customerId: string | null,
    attribution: Attribution,
    occurredAt: Date,
    program: SaleEntryProgram,
    terms: { rate: AppliedRate; holds: HoldReason[] | undefined },
  ): NewSale {
    return {
      conversion: {
        id: newRowId(),
        organization_id: organizationId,
        external_id: input.external_id,
        amount: String(input.amount),
        currency: decision.currency,
        kind: decision.kind,
        commission_amount: decision.commission,
        customer_id: customerId,
        affiliate_id: attribution.affiliate_id,
        program_id: attribution.program_id,
        click_id: attribution.click_id,
        occurred_at: occurredAt,
        created_at: new Date(),
      },
      saleId: newRowId(),
      saleApprovesAt: saleApprovesAt(occurredAt, program),
      saleRate: terms.rate,
      saleHoldReasons: terms.holds,
    };
  }

  /**
   * Records a refund of the charge (by UUID or external_id), decided by charges/decision.ts
   * (decideRefund) on the conversion as locked and its refunds recorded so far. `deduped` is true
   * when the conversion stays as it was.
   */
  async refund(
    organizationId: string,
    id: string,
    report: RefundReport,
  ): Promise<{ conversion: Conversion; deduped: boolean }> {
    const now = new Date();
    const { conversion, changed } = await this.repository.refund(organizationId, id, (c, recorded) =>
      decideRefund(
        report,
        {
          amount: c.amount,
          currency: c.currency,
          commission_amount: c.commission_amount,
          gross_commission_amount: c.gross_commission_amount ?? null,
          refunded_amount: c.refunded_amount ?? '0',
          reversed_at: c.reversed_at ?? null,
        },
        recorded,
        now,
      ),
    );
    return { conversion: toConversionDto(conversion), deduped: !changed };
  }

  /** By the service's UUID or the merchant's external_id; 403 when only another organization has it. */
  async get(organizationId: string, id: string): Promise<Conversion> {
    return toConversionDto(await this.repository.findOwned(organizationId, id));
  }

  async list(
    organizationId: string,
    query: ConversionListQuery,
  ): Promise<{ conversions: Conversion[]; next_cursor: string | null }> {
    const limit = pageLimit(query.limit);
    const rows = await this.repository.list(
      organizationId,
      {
        customer_id: query.customer_id,
        affiliate_id: query.affiliate_id,
        program_id: query.program_id,
        from: query.from ? new Date(query.from) : undefined,
        to: query.to ? new Date(query.to) : undefined,
        before: decodeCursor(query.cursor),
      },
      limit + 1,
    );
    const page = pageOf(rows, limit, (c) => ({ at: new Date(c.occurred_at), id: c.id }));
    return { conversions: page.items.map(toConversionDto), next_cursor: page.next_cursor };
  }
}
