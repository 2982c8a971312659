import type { Conversion, Customer } from '../resources.js';
import { DomainError } from '../domain-errors.js';
import type { CreateConversionInput } from '../modules/conversions/conversions.service.js';
import type { ChannelPolicy } from './channels.js';

/**
 * What recording a charge, a refund and a cancellation comes to, for every channel (the REST API,
 * every payment provider, whatever reports money next), and how a channel's policy answers the
 * rules' refusals (channels.ts): pure, no I/O. The recording itself (gather the facts, ask
 * decision.ts, write) is the conversions module's: modules/conversions/charge-recorder.ts.
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

export type ChargeOutcome<C extends ChannelPolicy> = OrNothing<
  C,
  RecordedConversion | (C['zeroAmountCharge'] extends 'conversion' ? never : RecordedSignup)
>;
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
export const refused = (channel: ChannelPolicy, error: DomainError, reason: string): Error =>
  channel.refusals === 'answer' ? error : new Refusal(reason);

/**
 * Runs `record` and answers its refusals by the channel's policy: under `answer` they are thrown
 * as they are (the edge maps the DomainError to the API's 4xx), under `ignore` they become the
 * outcome.
 */
export function underPolicy<T>(
  channel: ChannelPolicy,
  reasonFor: (err: DomainError) => string,
  record: () => Promise<T>,
): Promise<T | NothingRecorded> {
  if (channel.refusals === 'answer') return record();
  return record().catch((err: unknown): NothingRecorded => {
    if (err instanceof Refusal) return { recorded: 'nothing', reason: err.reason };
    if (isFinalRefusal(err)) return { recorded: 'nothing', reason: reasonFor(err) };
    throw err;
  });
}
