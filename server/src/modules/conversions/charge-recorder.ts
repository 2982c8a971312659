import { Decimal } from 'decimal.js';
import { hasClickAttribution } from '../../attribution/resolver.js';
import type { ChannelPolicy } from '../../charges/channels.js';
import { statusAfterCancellation } from '../../charges/decision.js';
import {
  refused,
  underPolicy,
  type CancellationOutcome,
  type ChargeOutcome,
  type ChargeReport,
  type RecordedCancellation,
  type RecordedConversion,
  type RecordedRefund,
  type RecordedSignup,
  type RefundOutcome,
} from '../../charges/record.js';
import type { RefundReport } from '../../charges/decision.js';
import { DomainError, InvalidInputError, NoAttributionError, NotFoundError } from '../../domain-errors.js';
import type { CustomersRepository } from '../customers/customers.repository.js';
import { toCustomerDto, type CustomersService } from '../customers/customers.service.js';
import type { ConversionsService } from './conversions.service.js';

/**
 * Recording a charge, a refund and a cancellation, for every channel: the REST API
 * (conversions.router.ts), every payment provider (webhooks/dispatcher.ts), and whatever reports
 * money next. Each use case gathers its facts through a repository, asks the pure rules
 * (charges/decision.ts; the channel's named policy, charges/channels.ts and charges/record.ts) and
 * writes through one repository call; the conversions and customers services do that for a charge
 * and a refund, this class for a cancellation.
 */
export class ChargeRecorder {
  constructor(
    private readonly conversions: ConversionsService,
    private readonly customers: CustomersService,
    private readonly customerRows: Pick<CustomersRepository, 'findByCustomerId' | 'updateOwnedStatus'>,
  ) {}

  /**
   * A charge: a conversion (attributed by click, or by a tracked customer), or under the
   * `trial-signup` policy a zero-amount charge's referred signup.
   */
  recordCharge<C extends ChannelPolicy>(
    organizationId: string,
    charge: ChargeReport,
    channel: C,
  ): Promise<ChargeOutcome<C>> {
    const byClick = hasClickAttribution(charge);
    const reason = (err: DomainError) =>
      err instanceof NoAttributionError && !byClick
        ? `Customer ${charge.customer_id} was not referred: no conversion`
        : `${err.message} for ${charge.external_id}`;
    return underPolicy(channel, reason, async (): Promise<RecordedConversion | RecordedSignup> => {
      if (channel.zeroAmountCharge === 'trial-signup' && new Decimal(charge.amount).isZero())
        return this.signup(organizationId, charge, channel);
      if (!charge.customer_id && !byClick) {
        throw refused(
          channel,
          new InvalidInputError('customer_id: one of customer_id, cookie_id, ref or click_id is required'),
          `Charge ${charge.external_id} carries no referral and no customer`,
        );
      }
      const { conversion, deduped } = await this.conversions.create(organizationId, charge, channel);
      return { recorded: 'conversion', conversion, deduped };
    }) as Promise<ChargeOutcome<C>>;
  }

  /** A refund of the conversion `conversionId` (the service's UUID or the merchant's external_id). */
  recordRefund<C extends ChannelPolicy>(
    organizationId: string,
    conversionId: string,
    report: RefundReport,
    channel: C,
  ): Promise<RefundOutcome<C>> {
    return underPolicy(
      channel,
      (err) => `${err.message} for ${conversionId}`,
      async (): Promise<RecordedRefund> => {
        const { conversion, deduped } = await this.conversions.refund(organizationId, conversionId, report);
        return { recorded: 'refund', conversion, deduped };
      },
    ) as Promise<RefundOutcome<C>>;
  }

  /** A subscription cancelled: the customer (the merchant's customer id) becomes `canceled`; deduped when it already is. */
  recordCancellation<C extends ChannelPolicy>(
    organizationId: string,
    customerId: string,
    channel: C,
  ): Promise<CancellationOutcome<C>> {
    return underPolicy(
      channel,
      (err) => `${err.message} for ${customerId}`,
      async (): Promise<RecordedCancellation> => {
        const customer = await this.customerRows.findByCustomerId(organizationId, customerId);
        if (!customer)
          throw refused(channel, new NotFoundError('Customer not found'), `Customer ${customerId} was not referred`);
        const next = statusAfterCancellation(customer.status);
        if (!next) return { recorded: 'cancellation', customer: toCustomerDto(customer), deduped: true };
        const canceled = await this.customerRows.updateOwnedStatus(organizationId, customer.id, next, new Date());
        return { recorded: 'cancellation', customer: toCustomerDto(canceled), deduped: false };
      },
    ) as Promise<CancellationOutcome<C>>;
  }

  /** A zero-amount charge with a referral and a customer: no sale, the referred customer tracked as `trial`. */
  private async signup(organizationId: string, charge: ChargeReport, channel: ChannelPolicy): Promise<RecordedSignup> {
    const { customer_id, cookie_id, ref, click_id, coupon, email } = charge;
    if (!customer_id || !hasClickAttribution(charge)) {
      throw refused(
        channel,
        new InvalidInputError(
          'amount: a zero-amount charge records no conversion, only the signup of a referred customer',
        ),
        `Zero-amount charge ${charge.external_id}: no conversion`,
      );
    }
    const { customer, deduped } = await this.customers.create(organizationId, {
      customer_id,
      cookie_id,
      ref,
      click_id,
      coupon,
      status: 'trial',
      email,
    });
    return { recorded: 'signup', customer, deduped };
  }
}
