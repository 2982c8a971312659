import type { MikroORM } from '@mikro-orm/postgresql';
import type { Conversion, Customer } from '@affiliate-attribution/contract';
import { Decimal } from 'decimal.js';
import { hasClickAttribution } from '../attribution/resolver.js';
import { DomainError, InvalidInputError, NoAttributionError, NotFoundError } from '../domain-errors.js';
import type { ConversionsService, CreateConversionInput } from '../modules/conversions/conversions.service.js';
import { findCustomerInOrganization, toCustomerDto, type CustomersService } from '../modules/customers/customers.service.js';
import type { ChannelPolicy } from './channels.js';
import { statusAfterCancellation, type RefundReport } from './decision.js';

/**
 * Recording a charge, a refund and a cancellation, for every channel: the REST API
 * (modules/conversions/conversions.router.ts), every payment provider (webhooks/dispatcher.ts),
 * and whatever reports money next. The rules are decision.ts's, the same for all; what differs
 * between channels is a named policy (channels.ts), applied here and nowhere else.
 */

/** A charge as any channel reports it. */
export interface ChargeReport extends CreateConversionInput {
  /** The customer's e-mail, kept when the charge tracks a new customer (a provider's trial signup). */
  email?: string | undefined;
}

export interface RecordedConversion {
  recorded: 'conversion';
  conversion: Conversion;
  deduped: boolean;
}

/** A referred signup: a zero-amount charge under the `trial-signup` policy tracks its customer as `trial`. */
export interface RecordedSignup {
  recorded: 'signup';
  customer: Customer;
  deduped: boolean;
}

export interface RecordedRefund {
  recorded: 'refund';
  conversion: Conversion;
  deduped: boolean;
}

export interface RecordedCancellation {
  recorded: 'cancellation';
  customer: Customer;
  /** The customer was canceled already: nothing changed. */
  deduped: boolean;
}

/** What the rules refused, under the `ignore` policy: nothing was written. */
export interface NothingRecorded {
  recorded: 'nothing';
  reason: string;
}

/** Under `refusals: 'ignore'` a refusal is an outcome; under `answer` it is thrown (the API's 4xx). */
type OrNothing<C extends ChannelPolicy, T> = C['refusals'] extends 'answer' ? T : T | NothingRecorded;

export type ChargeOutcome<C extends ChannelPolicy> = OrNothing<C, RecordedConversion | (C['zeroAmountCharge'] extends 'conversion' ? never : RecordedSignup)>;
export type RefundOutcome<C extends ChannelPolicy> = OrNothing<C, RecordedRefund>;
export type CancellationOutcome<C extends ChannelPolicy> = OrNothing<C, RecordedCancellation>;

/** A refusal that is final: the same request is refused the same way every time (a rate limit or an unavailable database may pass later). */
const isFinalRefusal = (err: unknown): err is DomainError => err instanceof DomainError;

/** A refusal under the `ignore` policy: recorded as nothing, with this reason. */
class Refusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** A refusal the rules make, as the channel answers it: the API's 4xx, or a reason to record nothing with. */
const refused = (channel: ChannelPolicy, error: DomainError, reason: string): Error => (channel.refusals === 'answer' ? error : new Refusal(reason));

export class ChargeRecorder {
  constructor(
    private readonly orm: MikroORM,
    private readonly conversions: ConversionsService,
    private readonly customers: CustomersService,
  ) {}

  /**
   * A charge: a conversion (attributed by click, or by a tracked customer), or under the
   * `trial-signup` policy a zero-amount charge's referred signup.
   */
  recordCharge<C extends ChannelPolicy>(organizationId: string, charge: ChargeReport, channel: C): Promise<ChargeOutcome<C>> {
    const byClick = hasClickAttribution(charge);
    const reason = (err: DomainError) =>
      err instanceof NoAttributionError && !byClick ? `Customer ${charge.customer_id} was not referred: no conversion` : `${err.message} for ${charge.external_id}`;
    return this.underPolicy(channel, reason, async (): Promise<RecordedConversion | RecordedSignup> => {
      if (channel.zeroAmountCharge === 'trial-signup' && new Decimal(charge.amount).isZero()) return this.signup(organizationId, charge, channel);
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
  recordRefund<C extends ChannelPolicy>(organizationId: string, conversionId: string, report: RefundReport, channel: C): Promise<RefundOutcome<C>> {
    return this.underPolicy(channel, (err) => `${err.message} for ${conversionId}`, async (): Promise<RecordedRefund> => {
      const { conversion, deduped } = await this.conversions.refund(organizationId, conversionId, report);
      return { recorded: 'refund', conversion, deduped };
    }) as Promise<RefundOutcome<C>>;
  }

  /** A subscription cancelled: the customer (the merchant's customer id) becomes `canceled`; deduped when it already is. */
  recordCancellation<C extends ChannelPolicy>(organizationId: string, customerId: string, channel: C): Promise<CancellationOutcome<C>> {
    return this.underPolicy(channel, (err) => `${err.message} for ${customerId}`, async (): Promise<RecordedCancellation> => {
      const customer = await findCustomerInOrganization(this.orm, organizationId, customerId);
      if (!customer) throw refused(channel, new NotFoundError('Customer not found'), `Customer ${customerId} was not referred`);
      const next = statusAfterCancellation(customer.status);
      if (!next) return { recorded: 'cancellation', customer: toCustomerDto(customer), deduped: true };
      return { recorded: 'cancellation', customer: await this.customers.updateStatus(organizationId, customer.id, next), deduped: false };
    }) as Promise<CancellationOutcome<C>>;
  }

  /** A zero-amount charge with a referral and a customer: no sale, the referred customer tracked as `trial`. */
  private async signup(organizationId: string, charge: ChargeReport, channel: ChannelPolicy): Promise<RecordedSignup> {
    const { customer_id, cookie_id, ref, click_id, coupon, email } = charge;
    if (!customer_id || !hasClickAttribution(charge)) {
      throw refused(
        channel,
        new InvalidInputError('amount: a zero-amount charge records no conversion, only the signup of a referred customer'),
        `Zero-amount charge ${charge.external_id}: no conversion`,
      );
    }
    const { customer, deduped } = await this.customers.create(organizationId, { customer_id, cookie_id, ref, click_id, coupon, status: 'trial', email });
    return { recorded: 'signup', customer, deduped };
  }

  /**
   * Runs `record` and answers its refusals by the channel's policy: under `answer` they are thrown
   * as they are (refused() throws the DomainError itself; the edge maps it to the API's 4xx), under `ignore` they become the outcome.
   */
  private underPolicy<T>(channel: ChannelPolicy, reasonFor: (err: DomainError) => string, record: () => Promise<T>): Promise<T | NothingRecorded> {
    if (channel.refusals === 'answer') return record();
    return record().catch((err: unknown): NothingRecorded => {
      if (err instanceof Refusal) return { recorded: 'nothing', reason: err.reason };
      if (isFinalRefusal(err)) return { recorded: 'nothing', reason: reasonFor(err) };
      throw err;
    });
  }
}
