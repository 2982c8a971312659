import { ErrorMessages } from '@affiliate-attribution/contract';

/**
 * What the rules refuse, in the domain's own terms. The pure rules (attribution/, charges/) and the
 * services throw these; they know nothing of HTTP. The edge maps each kind to a status in one place
 * (http/error-handler.ts, domainStatus), and so does every channel that answers otherwise (a
 * payment provider's webhook records nothing: charges/record.ts). A domain error is a final
 * refusal: the same input is refused the same way every time.
 */
export type DomainErrorKind = 'invalid-input' | 'not-found' | 'conflict' | 'expired' | 'too-large';

export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The input breaks a rule; the message names the field first ("amount: must be >= 0"). */
export class InvalidInputError extends DomainError {
  readonly kind = 'invalid-input';
}

/** Nothing of this organization has that identifier. */
export class NotFoundError extends DomainError {
  readonly kind = 'not-found';
  constructor(message: string = ErrorMessages.notFound) {
    super(message);
  }
}

/** No click, cookie, slug or coupon of the organization attributes the request (or its affiliate is not active). */
export class NoAttributionError extends NotFoundError {
  constructor() {
    super(ErrorMessages.noAttribution);
  }
}

/** The request contradicts what is recorded (an idempotency key reused with other input, a refund beyond the recorded ones). */
export class ConflictError extends DomainError {
  readonly kind = 'conflict';
}

/** A document (a partner's tax form) larger than the rule allows; the message says the limit. */
export class TooLargeError extends DomainError {
  readonly kind = 'too-large';
}

/** The click exists but its program's click window has passed. */
export class AttributionWindowExpiredError extends DomainError {
  readonly kind = 'expired';
  constructor() {
    super(ErrorMessages.attributionWindowExpired);
  }
}
